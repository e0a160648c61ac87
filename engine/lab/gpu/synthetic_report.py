"""The synthetic bench's table."""

from __future__ import annotations

from typing import Any


def format_table(res: dict[str, Any]) -> str:
    lines = []
    dev = res.get("device", {})
    m = res.get("model", {})
    lines.append(
        f"synthetic {res.get('shape')} on {dev.get('name')} ({dev.get('kind')}): {m.get('file_gib')} GiB file, "
        f"{m.get('bytes_per_token', 0) / 1e9:.2f} GB read per token"
    )
    bw = dev.get("bandwidth_gbs")
    p = res.get("plain")
    if p:
        lines.append(
            f"plain decode      raw loop {p['raw_tok_s']:8.2f} tok/s   engine {p['engine_tok_s']:8.2f} tok/s   "
            f"overhead {p['overhead_pct']:+.2f}%   same tokens: {p['same_tokens']}"
        )
        if p.get("ceiling_frac"):
            lines.append(
                f"bandwidth ceiling {res['ceiling_tok_s']:8.2f} tok/s ({bw:.0f} GB/s, {dev.get('bandwidth_source')}): "
                f"plain decode at {p['ceiling_frac'] * 100:.1f}%"
            )
    if "prefill_tok_s" in res:
        lines.append(f"prefill           {res['prefill_tok_s']:8.1f} tok/s (512-token prompt)")
    vr = res.get("verify_ratio")
    if vr:
        lines.append("verify cost (rows: ms, x one row)")
        keys = sorted(int(k) for k in vr)
        row = []
        for n in keys:
            if n in (1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 17, 24, 32, 33) or n == keys[-1]:
                row.append(f"{n}: {res['verify_ms'][n]:.2f} ({vr[n]:.2f}x)")
        for i in range(0, len(row), 5):
            lines.append("  " + "   ".join(row[i : i + 5]))
    sp = res.get("spec")
    if sp:
        lines.append(
            f"{'case':10} {'K':>3} {'tau':>6} {'tok/s':>9} {'predicted':>9} {'error':>7} {'speedup':>7}"
        )
        for r in sp:
            err = f"{r['error_pct']:+.1f}%" if r["error_pct"] is not None else "-"
            lines.append(
                f"{r['case']:10} {r['window']:3d} {r['tau']:6.2f} {r['tok_s']:9.2f} {r['predicted_tok_s']:9.2f} "
                f"{err:>7} {r['speedup_vs_raw']:6.2f}x"
            )
    ad = res.get("adaptive")
    if ad:
        lines.append(
            "adaptive window (policy) at constant acceptance, against the best fixed window on the curve"
        )
        for r in ad:
            lines.append(
                f"  rate {r['rates'][0]:.2f} {r.get('estimator', ''):<11}: {r['tok_s']:8.2f} tok/s (tau {r['tau']:.2f}, mean window {r['mean_window']:.1f}); "
                f"best fixed K={r['best_fixed_window']}: {r['best_fixed_tok_s']:.2f} tok/s ({r['vs_best_pct']:+.1f}%)"
            )
    st = res.get("settings")
    if st:
        lines.append("settings: " + "; ".join(f"{k} {v.get('tok_s', v.get('error'))}" for k, v in st.items()))
    le = res.get("local_engine")
    if le:
        runs = "; ".join(
            f"{k[5:]} {v['decode_tok_s']} tok/s tau {v['tau']}"
            for k, v in le.items()
            if k.startswith("spec_")
        )
        lines.append(
            f"LocalEngine (KV q8_0, flash attention, f16 drafter, {le['backend']}): {runs}; "
            f"fit estimate {le['fit_need_device_gib']} GiB, used {le.get('device_used_gib', '?')} GiB"
        )
    fit = res.get("fit")
    if fit:
        lines.append(
            f"fit check: needs {fit['need_device_gib'] or fit['need_host_gib']} GiB "
            f"({'device' if fit['gpu'] else 'host'}); device really used {res.get('device_used_gib', '?')} GiB"
        )
    if res.get("errors"):
        lines.append(f"errors: {res['errors']}")
    return "\n".join(lines)
