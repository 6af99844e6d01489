"""Answer: from search's results to the text a visitor reads.

It owns the passages chosen from the found notes within the prompt's budget (`passages`), the
prompt and the citations it allows (`prompt`),
the web and e-mail addresses and phone numbers an answer may give, its notes' (`addresses`), the Ollama client with its timeouts and the
reasoning it strips (`llm`), whether an answer reads as French (`language`), the slots, queue and model hosts every generation goes through
(`admission`), the finished answers kept for the questions asked again (`reuse`), and the
extractive answer built from the notes when the LLM fails or generation is full (`fallback`). It reads `retrieval`; nothing here imports `store` or `server`.
"""
