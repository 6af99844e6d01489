"""Store: what the daemon keeps between two calls or two starts, off the answer's path.

It owns the persistent index cache (marshal, checksummed, checked against every file: `cache`),
the cold load of a large vault in worker processes that the cache's format joins (`parallel`),
the paths, names and own pages of the hidden notes, there or gone, for a start without that
cache (`gone`), and the visitors' question log in SQLite that alias suggestions read
(`questionlog`), without the e-mail addresses, phone, IBAN, card and social security numbers
and street addresses visitors type (`redaction`). It reads
`retrieval`'s types; nothing here imports `answer` or `server`.
"""
