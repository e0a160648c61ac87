"""The fourth held-out set (``--suite heldout4``), written after the eighth round of tuning ended
(bonus-token evidence, opening copies, followed copies, regime buckets): a Python edit, a Rust
edit and new TypeScript code on files and tasks the engine had never seen."""

from __future__ import annotations

from engine.lab.benchdata.workloads import _edit, _new

HELDOUT4_PY = _edit(
    "heldout4-python", "billing.py", "python",
    "Add credits: `Biller.grant(customer, amount: Decimal, reason: str)` records a credit, `invoice` applies a "
    "customer's unused credits to the invoice total (never below zero, oldest credit first) as a `credits` "
    "field on Invoice, and `to_csv` writes one extra row per applied credit with meter `credit`.",
)
HELDOUT4_RS = _edit(
    "heldout4-rust", "tokenizer.rs", "rust",
    "Add `^` (Token::Caret) and string literals in double quotes with `\\\"` and `\\\\` escapes (Token::Str), "
    "reporting an unterminated string as a LexError at its opening quote, and add a test for each.",
)
HELDOUT4_NEW = _new(
    "heldout4-new-code",
    "Write a TypeScript module `retry.ts` exporting `retry<T>(fn: () => Promise<T>, opts)` with options "
    "`attempts`, `baseDelayMs`, `maxDelayMs`, `factor`, `jitter` (0-1) and `shouldRetry(err, attempt)`, using "
    "exponential backoff and an AbortSignal to cancel, with JSDoc comments, then write vitest tests for it.",
)
HELDOUT4 = (HELDOUT4_PY, HELDOUT4_RS, HELDOUT4_NEW)
