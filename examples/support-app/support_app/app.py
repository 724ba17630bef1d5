"""Acme Cloud's support assistant: pick the policies a question is about, then ask a model.

It talks to any OpenAI-compatible server with plain httpx, at ``OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``), as the openai SDK does. Nothing here knows about pytest-omk: the
eval points that variable at its recording gateway, so the model call replays in CI.
"""

from __future__ import annotations

import os
import re

import httpx

SYSTEM = (
    "You are Acme Cloud's support assistant. Answer the customer in at most three sentences, using only "
    "the policies below. If they do not cover the question, say you will pass it to a human colleague."
)


class SupportApp:
    """Answers support questions from a dictionary of policies (title -> text)."""

    def __init__(self, policies: dict[str, str], *, model: str = "gpt-4o-mini") -> None:
        self.policies = policies
        self.model = model
        self.base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
        key = os.environ.get("OPENAI_API_KEY", "")
        self.http = httpx.Client(timeout=60, headers={"authorization": f"Bearer {key}"} if key else {})

    def relevant(self, question: str) -> list[str]:
        """The policies sharing a word with the question (a stand-in for a real retriever)."""
        words = set(re.findall(r"[a-z]{4,}", question.lower()))
        return [f"{title}: {text}" for title, text in self.policies.items() if words & set(re.findall(r"[a-z]{4,}", text.lower() + " " + title.lower()))]

    def answer(self, question: str) -> str:
        """One chat completion with the relevant policies in the system message."""
        policies = "\n".join(f"- {p}" for p in self.relevant(question)) or "- (no policy matched)"
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": f"{SYSTEM}\n\nPolicies:\n{policies}"},
                {"role": "user", "content": question},
            ],
        }
        reply = self.http.post(f"{self.base_url}/chat/completions", json=body)
        reply.raise_for_status()
        return str(reply.json()["choices"][0]["message"]["content"]).strip()

    def close(self) -> None:
        """Close the HTTP connections."""
        self.http.close()
