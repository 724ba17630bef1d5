"""The generated model: the same file for the same seed, small, and both vocabularies load."""

from __future__ import annotations

from pathlib import Path

from tests.support.llama_cpp import StartServer


def test_the_model_is_the_same_file_for_a_seed_and_another_for_another(tmp_path: Path) -> None:
    from tests.support.tiny_model import write_model

    first = write_model(tmp_path / "a.gguf", "bpe", seed=7).read_bytes()
    again = write_model(tmp_path / "b.gguf", "bpe", seed=7).read_bytes()
    other = write_model(tmp_path / "c.gguf", "bpe", seed=8).read_bytes()
    assert first == again != other
    assert 500_000 < len(first) < 900_000


def test_llama_cpp_loads_both_vocabularies_with_their_metadata(
    tiny_models: dict[str, Path], llama_server: StartServer
) -> None:
    import httpx

    for vocabulary in ("bpe", "spm"):
        server = llama_server(vocabulary)
        props = httpx.get(server.base_url + "/props", timeout=10).json()
        assert "<|im_start|>" in props["chat_template"]
        tokens = httpx.post(
            server.base_url + "/tokenize", json={"content": "hello there"}, timeout=10
        ).json()["tokens"]
        assert 2 <= len(tokens) <= 11
        server.stop()
