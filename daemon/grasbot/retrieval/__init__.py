"""Retrieval: from the vault's files to the notes that answer a question, and nothing after.

It owns reading the vault (frontmatter, visibility, links: `vault`), the French text analysis
(`analysis`), the lines many notes share that search reads past (`boilerplate`), the inverted
index and its packed postings (`postings`, `sections`, `index`),
the scoring signals and their bounds (`scoring`, its `SIGNALS` registry), meaning beside words
(`semantic`), the link graph's expansion (`graph`), the ranked search itself (`search`) and the
alias suggestions an owner reads (`aliases`). Nothing here imports `answer`, `store` or `server`
at run time (`aliases` names the question log's type only): the data flows files -> vault ->
index -> search, and out.
"""
