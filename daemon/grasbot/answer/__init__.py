"""Answer: from search's results to the text a visitor reads.

It owns the passages chosen from the found notes within the prompt's budget (`passages`), the
prompt and the citations it allows (`prompt`), the Ollama client with its timeouts and the
reasoning it strips (`llm`), and the extractive answer built from the notes when the LLM fails
(`fallback`). It reads `retrieval`; nothing here imports `store` or `server`.
"""
