"""A tiny causal LM and tokenizer built from code, so tests and benchmarks run with no download.

The weights are random; the model is only good for exercising the pipeline end to end (generation,
GRPO updates, saving, loading) on a CPU in seconds.
"""

from __future__ import annotations

from pathlib import Path

# A ChatML-like template: enough to run the conversational code path that real chat models use.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

TRAINING_TEXT = [
    "Q: What is 2 + 3? Let's think step by step and output the final answer within \\boxed{}.",
    "2 + 3 = 5, so the answer is \\boxed{5}.",
    "Is it an animal? Yes. Is it a fruit? No. The answer is \\boxed{Apple}.",
    "Options: A. 12 B. 7 C. 3 D. 9. The answer is \\boxed{B}.",
    "You are a helpful assistant. 0 1 2 3 4 5 6 7 8 9 + - * / = ( ) { } [ ] ? . ,",
]


def build_tiny_model(
    out_dir: str | Path,
    *,
    hidden_size: int = 32,
    layers: int = 2,
    seed: int = 0,
    heads: int = 2,
    kv_heads: int = 1,
    max_positions: int = 1024,
    dtype: str | None = None,
) -> Path:
    """Write a randomly initialised Qwen2-style model (2 layers by default) and a byte-level BPE
    tokenizer. ``dtype`` ("bfloat16", "float16") sets the saved weights' type, which
    ``from_pretrained(dtype="auto")`` keeps, as a downloaded bf16 checkpoint does.

    Returns the directory, which `AutoModelForCausalLM.from_pretrained` and
    `AutoTokenizer.from_pretrained` load like any downloaded checkpoint. The benchmark
    (``benchmarks/ttra_gpu.py``) builds a larger one: 16 layers, width 1024, 16 heads.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(TRAINING_TEXT, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
    )
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    if dtype is not None:
        model = model.to(getattr(torch, dtype))
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
