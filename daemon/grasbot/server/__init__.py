"""Server: the aiohttp daemon around the engine, the only part that speaks HTTP.

It owns the app factory and the process (`app`: `create_app`, `serve`), the JSON-RPC methods
(`methods`) and their spec-exact dispatch (`rpc`), the OpenRPC document both sides are tested
against (`protocol`, shipping `protocol/openrpc.json`), the HTTP endpoints (`handlers`), what
wraps every request (`middleware`: CORS, errors, the access log), the application's keys and
who is asking (`state`), the owner token (`auth`), the per-client bucket (`ratelimit`), the SSE
framing (`sse`), the reload passed on to the other daemons of a scale-out (`peers`) and the
chat page and the widget (`static/`). It is the end of the chain: nothing imports it
but the public API and the command line.
"""
