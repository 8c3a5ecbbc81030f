"""Model names as other tools write them, `provider/model`: each names its provider's
OpenAI-compatible endpoint and reads the key from the provider's usual variable, while
`openai:MODEL[@URL]` works as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from disputelab.llm.models import MissingKeyError, ModelConfigError, parse_model
from disputelab.llm.openai_backend import OpenAICompatible

KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHER_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "VLLM_API_KEY",
)


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No key set and no .env to find: each test sets what it means to."""
    for name in (*KEYS, "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _backend(spec: str) -> OpenAICompatible:
    backend = parse_model(spec, {}).backend
    assert isinstance(backend, OpenAICompatible)
    return backend


@pytest.mark.parametrize(
    ("spec", "url", "model", "key_env"),
    [
        ("openai/gpt-4o", "https://api.openai.com/v1", "gpt-4o", "OPENAI_API_KEY"),
        (
            "anthropic/claude-sonnet-4-5",
            "https://api.anthropic.com/v1/",
            "claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
        ),
        (
            "gemini/gemini-2.5-flash",
            "https://generativelanguage.googleapis.com/v1beta/openai/",
            "gemini-2.5-flash",
            "GEMINI_API_KEY",
        ),
        (
            "openrouter/meta-llama/llama-3.3-70b-instruct",
            "https://openrouter.ai/api/v1",
            "meta-llama/llama-3.3-70b-instruct",
            "OPENROUTER_API_KEY",
        ),
        (
            "together/openai/gpt-oss-20b",
            "https://api.together.ai/v1",
            "openai/gpt-oss-20b",
            "TOGETHER_API_KEY",
        ),
        ("groq/llama-3.3-70b", "https://api.groq.com/openai/v1", "llama-3.3-70b", "GROQ_API_KEY"),
        ("deepseek/deepseek-chat", "https://api.deepseek.com", "deepseek-chat", "DEEPSEEK_API_KEY"),
        ("mistral/mistral-small", "https://api.mistral.ai/v1", "mistral-small", "MISTRAL_API_KEY"),
    ],
)
def test_each_provider_name_calls_its_endpoint_with_the_key_from_its_variable(
    monkeypatch: pytest.MonkeyPatch, spec: str, url: str, model: str, key_env: str
) -> None:
    for other in KEYS:  # a key in every variable, so the one read is told apart
        monkeypatch.setenv(other, f"key-of-{other.lower()}")
    backend = _backend(spec)
    assert (backend.base_url, backend.model) == (url, model)
    assert backend.client.api_key == f"key-of-{key_env.lower()}"
    assert backend.name == spec  # the name the store, the cache and messages show


@pytest.mark.parametrize(
    ("spec", "key_env"),
    [("anthropic/claude-x", "ANTHROPIC_API_KEY"), ("gemini/gemini-x", "GEMINI_API_KEY")],
)
def test_a_provider_without_its_key_says_which_variable_to_set(spec: str, key_env: str) -> None:
    with pytest.raises(MissingKeyError) as exc:
        parse_model(spec, {})
    message = str(exc.value)
    assert message.startswith(f"model {spec!r} needs an API key: set {key_env} in the environment")
    assert ".env" in message and "\n" not in message


def test_ollama_needs_no_key_and_follows_ollama_host(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = _backend("ollama/llama3")
    assert (backend.base_url, backend.model, backend.client.api_key) == (
        "http://localhost:11434/v1",
        "llama3",
        "no-key",  # the SDK needs a value; the server ignores it
    )
    for host, url in [
        ("gpu-box", "http://gpu-box:11434/v1"),
        ("gpu-box:11500", "http://gpu-box:11500/v1"),
        ("0.0.0.0", "http://localhost:11434/v1"),  # a listening address, as servers set it
        ("https://ollama.example.org", "https://ollama.example.org/v1"),
        ("http://10.0.0.5:8080/", "http://10.0.0.5:8080/v1"),
    ]:
        monkeypatch.setenv("OLLAMA_HOST", host)
        assert _backend("ollama/llama3").base_url == url, host


def test_vllm_needs_the_server_and_sends_its_key_only_when_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ModelConfigError, match=r"vllm/qwen@http://HOST:PORT/v1"):
        parse_model("vllm/qwen", {})
    backend = _backend("vllm/Qwen/Qwen2.5-7B@http://127.0.0.1:8000/v1")
    assert (backend.base_url, backend.model) == ("http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-7B")
    assert backend.client.api_key == "no-key"
    monkeypatch.setenv("VLLM_API_KEY", "vllm-token-1")
    assert _backend("vllm/qwen@http://127.0.0.1:8000/v1").client.api_key == "vllm-token-1"


def test_a_url_after_a_provider_name_replaces_its_endpoint_and_makes_the_key_optional() -> None:
    backend = _backend("anthropic/claude-x@http://127.0.0.1:9/v1")
    assert (backend.base_url, backend.model) == ("http://127.0.0.1:9/v1", "claude-x")


def test_the_openai_colon_form_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unchanged")
    backend = _backend("openai:gpt-4o")
    assert backend.name == "openai:gpt-4o" and backend.base_url is None
    assert backend.client.api_key == "sk-test-unchanged"
    assert _backend("openai:m@http://127.0.0.1:9/v1").name == "openai:m@http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("anthropic/", "names no model after 'anthropic/'"),
        ("ollama/llama3@", "names no URL after '@'"),
        ("vllm/m@ftp://h/v1", "must be an http:// or https:// URL"),
        ("nosuch/model", "unknown model 'nosuch/model'; use rule, local, openai:MODEL[@URL]"),
    ],
)
def test_a_provider_name_that_cannot_be_used_is_one_line(spec: str, problem: str) -> None:
    with pytest.raises(ModelConfigError) as exc:
        parse_model(spec, {})
    assert problem in str(exc.value) and "\n" not in str(exc.value)


def test_the_unknown_name_message_lists_every_provider_prefix() -> None:
    with pytest.raises(ModelConfigError) as exc:
        parse_model("gpt-9", {})
    for prefix in ("openai/", "anthropic/", "gemini/", "ollama/", "vllm/", "openrouter/"):
        assert prefix in str(exc.value)


def test_a_profile_of_the_same_name_wins_over_the_provider_table() -> None:
    from disputelab.llm.models import Profile

    profile = Profile(model="served-name", base_url="http://127.0.0.1:9/v1")
    backend = parse_model("ollama/llama3", {"ollama/llama3": profile}).backend
    assert isinstance(backend, OpenAICompatible)
    assert (backend.base_url, backend.model) == ("http://127.0.0.1:9/v1", "served-name")


@pytest.mark.parametrize(
    "spec", ["groq/llama3, openai/gpt-4o", "openai:gpt 4o", "ollama/llama3\x00", "openai/a\tb"]
)
def test_a_model_id_with_a_space_or_control_character_is_refused(spec: str) -> None:
    with pytest.raises(ModelConfigError, match="holds no spaces or control characters"):
        parse_model(spec, {})
