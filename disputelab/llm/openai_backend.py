"""Any OpenAI-compatible chat endpoint, through the official `openai` SDK.

One backend covers the OpenAI API, vLLM, the llama.cpp server, Ollama, DeepSeek,
OpenRouter and the rest. The SDK's own retries are switched off: retrying is the
`Retrying` wrapper's job, so every retry is counted in one place.
"""

from __future__ import annotations

import base64
import datetime
import email.utils
import json
import math
import re
import time
from collections.abc import Sequence
from typing import Any

import aiohttp
import httpx2
import openai

from disputelab.llm.base import (
    ChatRequest,
    ChatResponse,
    ModelError,
    TransientModelError,
    token_count,
)
from disputelab.llm.embedding_reply import EmbeddingReply, embedding_reply, unsupported
from disputelab.llm.encoding import dumps_spliced
from disputelab.llm.keys import read_key
from disputelab.llm.openai_defaults import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S
from disputelab.llm.reply_body import MAX_REPLY_BYTES, ReplyBodyError
from disputelab.llm.transport import HttpTransport, failure
from disputelab.memo import ByIdentity
from disputelab.redact import (
    mask_secrets,
    redact,
    redact_url,
    remember_secret,
    remember_url_secrets,
    split_userinfo,
)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    return None if value is None else retry_after_seconds(value)


def retry_after_seconds(value: str, now: float | None = None) -> float | None:
    """A `Retry-After` header in either of its forms (RFC 9110): seconds, or an HTTP date
    (the wait is then until that moment, 0 if it has passed). None for anything else, so
    the call falls back to its backoff."""
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # HTTP dates are in GMT; an obsolete form may omit it
            when = when.replace(tzinfo=datetime.UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or seconds == -math.inf:
        return None
    return max(0.0, seconds)  # an infinite wait stays one: the call gives up, saying so


_BODY_HEADERS = ("content-encoding", "content-length", "transfer-encoding")
_FORMATS = ("json_schema", "json_object_schema", "json_object")


# How servers say a prompt is longer than the model can read (OpenAI, vLLM, llama.cpp's
# server, Ollama), so the error can say so rather than just "bad request".
_CONTEXT_WORDS = (
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "exceeds the available context",
    "n_ctx",
    "context size",
    "too many tokens",
)


def server_reason(exc: openai.APIStatusError) -> str:
    """What the server said was wrong, in one short line (its `error.message` when the
    body has one), with any URL in it redacted."""
    body = exc.body
    message: object = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    if not message:
        message = exc.response.text if exc.response is not None else exc.message
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    line = " ".join(message.split())
    return redact(line[:300] + ("..." if len(line) > 300 else ""))


def _status_error(name: str, exc: openai.APIStatusError) -> Exception:
    """The model-layer error for an HTTP error status: transient ones are retried."""
    if exc.status_code == 429:
        return TransientModelError(f"{name}: rate limited (429)", _retry_after(exc), overload=True)
    if exc.status_code >= 500 or exc.status_code in (408, 409):
        return TransientModelError(
            f"{name}: server error {exc.status_code}: {server_reason(exc)}", _retry_after(exc)
        )
    reason = server_reason(exc)
    if exc.status_code == 400 and any(w in reason.lower() for w in _CONTEXT_WORDS):
        return ModelError(
            f"{name}: the prompt is longer than the model's context window ({reason}); "
            "use a model or server with a larger context, or fewer turns"
        )
    if exc.status_code == 400:
        return ModelError(f"{name}: bad request (400): {reason}")
    return ModelError(f"{name}: request refused ({exc.status_code}): {reason}")


def _request_headers(client: openai.AsyncOpenAI) -> dict[str, str]:
    """The headers the SDK would send: its auth, then its defaults and ours, which win
    (a URL's Basic credentials replace the bearer key). Unset ones are left out."""
    merged = {**client.auth_headers, **client.default_headers}
    return {k: v for k, v in merged.items() if isinstance(v, str)}


def _encoded(body: dict[str, Any]) -> bytes:
    """The request as UTF-8 JSON. Text with a lone surrogate (a model may send one as
    an escape, and its words come back in later prompts) cannot be UTF-8: then every
    non-ASCII character goes out escaped, which JSON allows."""
    text = (
        dumps_spliced(body, "response_format", ensure_ascii=False)
        if "response_format" in body
        else json.dumps(body, ensure_ascii=False)
    )
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(body).encode()


class _NotUsed(httpx2.AsyncBaseTransport):
    """The SDK client's transport: requests go through `HttpTransport` instead."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raise RuntimeError("disputelab sends chat requests through its own HTTP transport")


class OpenAICompatible:
    """Chat completions against `base_url`; the API key is read from `api_key_env`.

    Credentials written into the URL (`http://user:pass@host/v1`) are sent as HTTP Basic
    auth *instead of* the bearer key: the URL names this one endpoint, the key variable is
    often set for another. They are kept in memory only; `name` shows the URL redacted.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        json_schema: bool = True,
        connections: int = DEFAULT_CONCURRENCY,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        name: str | None = None,
    ) -> None:
        self.model = model
        if base_url:
            remember_url_secrets(base_url)  # masked in any text from now on
        url, userinfo = split_userinfo(base_url) if base_url else (None, None)
        self.base_url = url
        # The name the run, the cache and messages know the endpoint by: `name` when given
        # (a `provider/model` name, redacted), else the `openai:` form.
        self.name = name or f"openai:{model}" + (f"@{redact_url(base_url)}" if base_url else "")
        self.timeout_s = timeout_s
        key = read_key(api_key_env) if api_key_env else ""  # the environment, else .env
        remember_secret(key)  # a provider may quote it back in an error body
        headers: dict[str, str] = {}
        if userinfo is not None:
            token = base64.b64encode(f"{userinfo[0]}:{userinfo[1]}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        # Local servers need no key, but the SDK insists on one being set. Its own HTTP
        # client is never used (see below): given one that sends nothing, the SDK does
        # not build a pool and load the system's certificates (20-80 ms per endpoint).
        self.client = openai.AsyncOpenAI(
            api_key=key or "no-key",
            base_url=url,
            max_retries=0,
            timeout=timeout_s,
            default_headers=headers or None,
            http_client=httpx2.AsyncClient(transport=_NotUsed(), trust_env=False),
        )
        # Calls go out with the SDK's headers (its auth, user agent and any set here) and
        # its URL, as JSON prepared here: the SDK's request building walked every
        # parameter, the schema included, on every call, and with its HTTP wrapping cost
        # more CPU than the exchange itself. Retrying is the Retrying wrapper's job anyway.
        self._url = str(self.client.base_url.join("chat/completions"))
        self._embeddings_url = str(self.client.base_url.join("embeddings"))
        self._headers = _request_headers(self.client)
        self.http = HttpTransport(
            connections, timeout_s, self._url.startswith("https:"), max_reply_bytes
        )
        self.http.proxy_for(self._url)  # a proxy variable that is not a URL fails here
        # How this server takes a schema, most capable first; a refusal steps down once:
        # the OpenAI form, then json_object carrying the schema (llama.cpp's server turns
        # that into a grammar), then plain JSON mode checked by the structured layer.
        self.formats = list(_FORMATS if json_schema else _FORMATS[2:])
        self._built: ByIdentity[dict[str, Any]] = ByIdentity(limit=256)

    async def aclose(self) -> None:
        """Close the connection pool; call it on the event loop that used the client."""
        await self.http.aclose()
        await self.client.close()

    @property
    def json_schema(self) -> bool:
        return self.formats[0] == "json_schema"

    def _format(self, request: ChatRequest) -> dict[str, Any] | None:
        """The response_format for this request's schema in the server's current form;
        one object per schema and form, so its JSON is encoded once (`dumps_spliced`)."""
        if request.schema is None:
            return None
        mode = self.formats[0]
        known = self._built.get(request.schema, (mode, request.schema_name))
        if known is not None:
            return known
        if mode == "json_schema":
            fmt: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema},
            }
        elif mode == "json_object_schema":
            fmt = {"type": "json_object", "schema": request.schema}
        else:
            fmt = {"type": "json_object"}
        return self._built.put(request.schema, fmt, (mode, request.schema_name))

    def _refused_format(self, fmt: dict[str, Any] | None, exc: openai.APIStatusError) -> bool:
        """Did the server turn down our response_format? Some say so with a 500."""
        if fmt is None or len(self.formats) < 2 or exc.status_code == 429:
            return False
        return "response_format" in str(exc) or "json_schema" in str(exc)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        fmt = self._format(request)
        mode = self.formats[0]
        if fmt is not None:
            kwargs["response_format"] = fmt
        t0 = time.perf_counter()
        try:
            reply = await self._post(kwargs)
        except openai.APIStatusError as exc:
            if self._refused_format(fmt, exc):
                # Step down once per endpoint, however many calls in flight were refused
                # together: only a refusal of the format still current moves it on. The
                # check and the pop run with no await between them, so no other call on
                # this event loop can interleave (they are, in effect, under a lock).
                if self.formats[0] == mode and len(self.formats) > 1:
                    self.formats.pop(0)  # remembered for every later call to this server
                return await self.complete(request)
            raise _status_error(self.name, exc) from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise failure(self.name, exc, self.timeout_s) from None
        except ReplyBodyError as exc:  # too large, or an encoding not asked for
            raise TransientModelError(f"{self.name}: {exc}") from None
        except ValueError as exc:  # a 200 whose body is not JSON: a provider fault
            raise TransientModelError(
                f"{self.name}: the reply body was not valid JSON ({redact(str(exc))[:200]})"
            ) from None
        return self._response(reply, time.perf_counter() - t0)

    async def embed(self, texts: Sequence[str]) -> EmbeddingReply:
        """One `/embeddings` request for `texts`: a vector per text, in their order. A
        server without the endpoint (or whose model embeds nothing) raises
        `EmbeddingsUnsupported`, which is never retried."""
        body = {"model": self.model, "input": list(texts), "encoding_format": "float"}
        try:
            reply = await self._post(body, self._embeddings_url)
        except openai.APIStatusError as exc:
            if (why := unsupported(self.name, exc.status_code, server_reason(exc))) is not None:
                raise why from None
            raise _status_error(self.name, exc) from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise failure(self.name, exc, self.timeout_s) from None
        except ReplyBodyError as exc:
            raise TransientModelError(f"{self.name}: {exc}") from None
        except ValueError as exc:
            raise TransientModelError(
                f"{self.name}: the embeddings reply was not valid JSON ({redact(str(exc))[:200]})"
            ) from None
        return embedding_reply(self.name, reply, len(texts))

    async def _post(self, body: dict[str, Any], url: str = "") -> Any:
        """POST a chat completion (or, given its `url`, an embeddings request); its reply
        as parsed JSON. An error status raises the SDK's `APIStatusError`, carrying the
        server's own words."""
        url = url or self._url
        reply = await self.http.post(url, _encoded(body), self._headers)
        if reply.ok:
            try:
                return json.loads(reply.body)
            except RecursionError:  # a body nested past the parser's limit
                raise ValueError("it nests too deeply to read") from None
        # aiohttp has already decoded the body: a Content-Encoding left on it would make
        # httpx decode it again (and fail on a gzipped error reply).
        kept = [(k, v) for k, v in reply.headers.items() if k.lower() not in _BODY_HEADERS]
        response = httpx2.Response(
            reply.status,
            headers=kept,
            content=reply.body,
            request=httpx2.Request("POST", url),
        )
        try:
            error_body: object = response.json()
        except (ValueError, RecursionError):
            error_body = response.text or None
        message = f"Error code: {response.status_code} - {error_body}"
        raise openai.APIStatusError(message, response=response, body=error_body)

    def _response(self, reply: Any, latency_s: float) -> ChatResponse:
        """A chat completion's text, token counts and finish reason, from its JSON."""
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise TransientModelError(f"{self.name}: reply had no choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):  # seen from some providers under load: retried
            raise TransientModelError(f"{self.name}: reply had no message")
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise TransientModelError(f"{self.name}: the reply's content was not text")
        if not text.isascii():
            text = _LONE_SURROGATE.sub("\ufffd", text)
        text = mask_secrets(text)  # a reply quoting the key goes no further than here
        if _CONTROL.search(text):  # a NUL or an escape would reach the store and terminal
            text = _CONTROL.sub("", text)
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        tokens_in, why_in = token_count("prompt_tokens", usage.get("prompt_tokens"))
        tokens_out, why_out = token_count("completion_tokens", usage.get("completion_tokens"))
        extra: dict[str, Any] = {"finish_reason": choices[0].get("finish_reason")}
        if why_in or why_out:
            extra["usage_unknown"] = "; ".join(w for w in (why_in, why_out) if w)
        return ChatResponse(
            text=text,
            model=self.name,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            latency_s=latency_s,
            extra=extra,
        )


# JSON may escape half of a surrogate pair on its own ("\ud800"); such text is not
# Unicode, and the cache, the store and every later prompt would fail on it. Pairs are
# joined by the JSON decoder, so any surrogate left in a str is a lone one: it becomes
# U+FFFD, the replacement character, as undecodable bytes do.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Control characters but newline, tab and carriage return: stripped from replies.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
