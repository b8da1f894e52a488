"""`dbt init` offers this adapter and prompts for its keys (profile_template.yml): a new
user answers a few questions and gets a profile that works for the embedded catalog, or
one that names an S3 Tables bucket."""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
from pathlib import Path

import yaml

from tests.functional.harness import DBT, dbt_env


class Prompter:
    """Answers a command's prompts as they appear on its output (a tiny `expect`)."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=dbt_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.output = ""

    def expect(self, pattern: str, timeout: float = 60) -> str:
        """Wait for `pattern`; return the output up to it (and consume that much)."""
        deadline = time.monotonic() + timeout
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            match = re.search(pattern, self.output)
            if match:
                seen, self.output = self.output[: match.end()], self.output[match.end() :]
                return seen
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {pattern!r} in output: {self.output!r}"
            ready, _, _ = select.select([stdout], [], [], remaining)
            chunk = os.read(stdout.fileno(), 4096).decode() if ready else ""
            assert ready and chunk, f"no {pattern!r} before the end: {self.output!r}"
            self.output += chunk

    def answer(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{text}\n".encode())
        self.process.stdin.flush()

    def finish(self, timeout: float = 60) -> int:
        return self.process.wait(timeout=timeout)


def init_project(tmp_path: Path, catalog_choice: str, answers: list[tuple[str, str]]) -> dict:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    prompter = Prompter([DBT, "init", "shop", "--profiles-dir", str(profiles)], cwd=tmp_path)
    choices = prompter.expect(r"Enter a number")
    number = {name: n for n, name in re.findall(r"\[(\d+)\] (\w+)", choices)}
    assert "s3tables" in number, f"dbt init offers only {sorted(number)}"
    prompter.answer(number["s3tables"])

    catalog_list = prompter.expect(r"Desired catalog option")
    catalogs = {name: n for n, name in re.findall(r"\[(\d+)\] (\w+)", catalog_list)}
    assert set(catalogs) == {"embedded", "s3tables"}
    prompter.answer(catalogs[catalog_choice])
    for prompt, reply in answers:
        prompter.expect(prompt)
        prompter.answer(reply)
    assert prompter.finish() == 0, prompter.output
    return yaml.safe_load((profiles / "profiles.yml").read_text())["shop"]


def test_init_embedded_catalog_profile(tmp_path: Path) -> None:
    profile = init_project(
        tmp_path,
        "embedded",
        [(r"warehouse \(", ""), (r"schema \(", "analytics"), (r"threads \(", "2")],
    )
    assert profile["target"] == "dev"
    assert profile["outputs"]["dev"] == {
        "type": "s3tables",
        "catalog_type": "local",
        "warehouse": "./warehouse",
        "schema": "analytics",
        "threads": 2,
    }


def test_init_s3tables_profile(tmp_path: Path) -> None:
    arn = "arn:aws:s3tables:eu-west-1:111122223333:bucket/analytics-bucket"
    profile = init_project(
        tmp_path,
        "s3tables",
        [(r"table_bucket_arn \(", arn), (r"schema \(", "marts"), (r"threads \(", "")],
    )
    assert profile["outputs"]["dev"] == {
        "type": "s3tables",
        "catalog_type": "s3tables",
        "table_bucket_arn": arn,
        "schema": "marts",
        "threads": 4,
    }
