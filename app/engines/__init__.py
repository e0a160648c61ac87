"""The engines the app opens beside engine/'s in-process ones: the factory that picks one for a
Config (an endpoint, a running ``tau serve``, or LocalEngine) and the remote engine over HTTP."""
