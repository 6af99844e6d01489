"""Retrieval: from the vault's files to the notes that answer a question, and nothing after.

It owns reading the vault (the frontmatter's YAML, bounded: `frontmatter`; where a note holds
code and comments, as CommonMark and Obsidian read them: `markdown`; every link syntax, found and
rewritten for a reader: `links`; notes, visibility, which note a link names: `vault`; a note's
path typed as text, masked for an audience that may not read it: `mentions`), the French text analysis (`analysis`), the lines many notes share that search
reads past (`boilerplate`), each note's cut into the sections passages are chosen from
(`sections`), the inverted index and its packed postings (`index`, `postings`), the scoring
signals and their bounds (`scoring`, its `SIGNALS` registry), meaning beside words
(`semantic`), the link graph's expansion (`graph`), the ranked search itself (`search`) and the
alias suggestions an owner reads (`aliases`). Nothing here imports `answer`, `store` or `server`
at run time (`aliases` names the question log's type only): the data flows files -> vault ->
index -> search, and out.
"""
