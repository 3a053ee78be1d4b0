"""A provider backed by a local transformers model folder, so a saved model (an aligned TTRA
model, say) can sit at a game table.

It has the same ``complete`` method as the API providers in `games.llm.providers`, so the LLM agents
drive it unchanged under the spec ``local:<path>``. Generation blocks, so it runs in a worker thread;
one lock serialises calls because the model and torch's random state are shared. Torch and
transformers (the ttra extra) are imported on first use, so this module imports without them.
"""

from __future__ import annotations

import asyncio
import threading
import time

from games.llm.providers import (
    Completion,
    Message,
    content_text,
    has_images,
    local_path,
    prompt_chars,
)


class LocalProvider:
    """``await LocalProvider(path).complete(messages)`` with a model loaded on first use."""

    def __init__(self, path: str, *, device: str | None = None) -> None:
        self.path = path
        self.device = device
        self._lock = threading.Lock()
        self._loaded: tuple | None = None

    @classmethod
    def from_spec(cls, spec: str) -> LocalProvider:
        """``local:/path/to/model`` → a provider for that folder."""
        return cls(str(local_path(spec, required=True)))

    def _load(self) -> tuple:
        if self._loaded is None:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            tokenizer = AutoTokenizer.from_pretrained(self.path)
            model = AutoModelForCausalLM.from_pretrained(self.path, dtype="auto").to(device)
            model.eval()
            self._loaded = (model, tokenizer)
        return self._loaded

    def _generate(
        self,
        messages: list[Message],
        system: str | None,
        temperature: float,
        max_tokens: int,
        sample: int,
    ) -> tuple[str, int, int]:
        import torch

        with self._lock:
            model, tokenizer = self._load()
            chat = ([{"role": "system", "content": system}] if system else []) + [
                {"role": m["role"], "content": content_text(m["content"])} for m in messages
            ]
            if tokenizer.chat_template is not None:
                text = tokenizer.apply_chat_template(
                    chat, tokenize=False, add_generation_prompt=True
                )
                enc = tokenizer(text, return_tensors="pt", add_special_tokens=False)
            else:
                text = "\n\n".join(m["content"] for m in chat)
                enc = tokenizer(text, return_tensors="pt")
            enc = enc.to(model.device)
            # The sample index seeds the draw, as the API providers key their cache by it.
            torch.manual_seed(sample)
            sampling = (
                {"do_sample": True, "temperature": temperature}
                if temperature > 0
                else {"do_sample": False}
            )
            with torch.no_grad():
                out = model.generate(
                    **enc,
                    max_new_tokens=max_tokens,
                    pad_token_id=tokenizer.pad_token_id,
                    **sampling,
                )
            new = out[0, enc["input_ids"].shape[1] :]
            reply = tokenizer.decode(new, skip_special_tokens=True)
            return reply, int(enc["input_ids"].shape[1]), int(new.shape[0])

    async def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        temperature: float = 1.0,
        max_tokens: int = 1024,
        sample: int = 0,
    ) -> Completion:
        if has_images(messages):
            raise ValueError(f"{self.path} is a local text model and cannot read images")
        started = time.perf_counter()
        text, input_tokens, output_tokens = await asyncio.to_thread(
            self._generate, messages, system, temperature, max_tokens, sample
        )
        return Completion(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            input_chars=prompt_chars(messages, system),
            output_chars=len(text),
            latency_s=time.perf_counter() - started,
            retries=0,
            cached=False,
        )
