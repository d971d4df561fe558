"""Versioned prompt templates: `prompts/<id>.md` = YAML front-matter over a Jinja2 body.

File format (full description and an example in `prompts/README.md`)::

    ---
    id: job_facts                 # must equal the file name without .md
    version: 1                    # bump on ANY change of system/body/params/schema (the lock test checks)
    description: One line on what the prompt does.
    schema: JobFacts              # name of the pydantic output model (informational; the caller passes it)
    params: {temperature: 0, max_tokens: 200, seed: null, top_p: null}
    system: |                     # optional Jinja system message ...
      You extract facts ...
    example: {input: ..., output: ...}   # optional, short, for readers and eval
    ---
    ... Jinja user message ...

Instead of the `system:` key, the body may hold both messages split by a line `---user---`: the text above is
the system message, the text below the user message (using both forms at once is an error).

Rendering uses Jinja's sandbox with `StrictUndefined`: a variable the template uses but the caller did not
pass raises `PromptRenderError` naming the prompt and the variable. `LLMClient.structured` also passes
`schema_json` (the compact JSON schema of the output model) unless the caller gives one.

Directory: `$SCHEDMATE_PROMPTS_DIR`, else the repository's `prompts/` (beside the `schedmate` package), else
`./prompts`.

Version guard: `prompts/VERSIONS.lock` holds `id version fingerprint` per prompt, where the fingerprint is the
sha256 of the system template, body, params and schema name (`prompt_fingerprint`). `check_lock` lists
prompts whose fingerprint changed while the version did not, prompts missing from the lock and stale lock
lines; `update_lock` (`schedmate llm lock-prompts`) rewrites the lock but refuses a changed prompt whose
version was not bumped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import jinja2
import yaml
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from schedmate.llm.errors import PromptError, PromptFormatError, PromptNotFoundError, PromptRenderError

LOCK_NAME = "VERSIONS.lock"
USER_SEPARATOR = "---user---"
_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")

_env = SandboxedEnvironment(
    undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True,
    keep_trailing_newline=False,
)


class PromptParams(BaseModel):
    """Decoding parameters stored beside the prompt; a call may override them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = None
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)


class _FrontMatter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    version: str
    description: str = ""
    schema_name: str | None = Field(default=None, alias="schema")
    params: PromptParams = PromptParams()
    system: str | None = None
    example: Any = None
    tags: list[str] = []

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v: object) -> object:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        return v

    @field_validator("version")
    @classmethod
    def _version_nonempty(cls, v: str) -> str:
        v = v.strip()
        if not v or any(c.isspace() for c in v):
            raise ValueError("version must be a non-empty word without spaces, e.g. 1 or 2.1")
        return v


class Prompt(BaseModel):
    """A loaded prompt: metadata, decoding params and the (compiled on demand) Jinja templates."""

    model_config = ConfigDict(frozen=True)

    id: str
    version: str
    description: str = ""
    params: PromptParams = PromptParams()
    schema_name: str | None = None
    example: Any = None
    system: str | None = None
    """Jinja source of the system message, if any."""
    body: str
    """Jinja source of the user message."""
    path: Path | None = None

    @property
    def fingerprint(self) -> str:
        return prompt_fingerprint(self)

    def render(self, variables: dict[str, Any] | None = None) -> list[dict[str, str]]:
        """Chat messages (`system` if any, then `user`) with `variables` filled in."""
        variables = dict(variables or {})
        messages = []
        if self.system is not None:
            messages.append({"role": "system", "content": self._render_one(self.system, variables, "system")})
        messages.append({"role": "user", "content": self._render_one(self.body, variables, "body")})
        return messages

    def _render_one(self, source: str, variables: dict[str, Any], part: str) -> str:
        where = f"prompt {self.id!r} ({self.path or 'inline'}), {part}"
        try:
            return _env.from_string(source).render(**variables).strip()
        except jinja2.UndefinedError as e:
            raise PromptRenderError(f"{where}: {e.message}; passed variables: {sorted(variables)}") from e
        except jinja2.TemplateSyntaxError as e:
            raise PromptFormatError(f"{where}, template line {e.lineno}: {e.message}") from e
        except jinja2.TemplateError as e:
            raise PromptRenderError(f"{where}: {e}") from e


def prompt_fingerprint(prompt: Prompt) -> str:
    """sha256 of what changes a prompt's behaviour: system template, body, params and schema name."""
    payload = {
        "system": prompt.system,
        "body": prompt.body,
        "params": prompt.params.model_dump(),
        "schema": prompt.schema_name,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def prompts_dir() -> Path:
    """`$SCHEDMATE_PROMPTS_DIR`, else the repository's `prompts/`, else `./prompts`."""
    env = os.environ.get("SCHEDMATE_PROMPTS_DIR")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise PromptNotFoundError(f"SCHEDMATE_PROMPTS_DIR={env} is not a directory")
        return path
    for candidate in (Path(__file__).resolve().parents[2] / "prompts", Path.cwd() / "prompts"):
        if candidate.is_dir():
            return candidate
    raise PromptNotFoundError("no prompts/ directory found: set SCHEDMATE_PROMPTS_DIR")


def parse_prompt(text: str, path: Path | None = None, expected_id: str | None = None) -> Prompt:
    """Parse the text of a prompt file; `PromptFormatError` names the file and what is wrong."""
    where = str(path) if path else "<prompt text>"
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise PromptFormatError(f"{where}: line 1 must be '---' opening the YAML front-matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise PromptFormatError(f"{where}: front-matter opened on line 1 is never closed by a '---' line") from None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f" line {mark.line + 2}" if mark is not None else ""
        raise PromptFormatError(f"{where}:{line} bad YAML front-matter: {getattr(e, 'problem', e)}") from e
    if not isinstance(meta, dict):
        raise PromptFormatError(f"{where}: front-matter must be a YAML mapping, got {type(meta).__name__}")
    try:
        fm = _FrontMatter.model_validate(meta)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'front-matter'}: {err['msg']}" for err in e.errors())
        raise PromptFormatError(f"{where}: bad front-matter: {problems}") from e
    if not _ID_RE.match(fm.id):
        raise PromptFormatError(f"{where}: id {fm.id!r} must be letters, digits, '_', '-' or '.'")
    if expected_id is not None and fm.id != expected_id:
        raise PromptFormatError(f"{where}: front-matter id {fm.id!r} differs from the file name {expected_id!r}")

    body_lines = lines[end + 1:]
    system = fm.system
    seps = [i for i, line in enumerate(body_lines) if line.strip() == USER_SEPARATOR]
    if len(seps) > 1:
        raise PromptFormatError(f"{where}: more than one '{USER_SEPARATOR}' line")
    if seps:
        if system is not None:
            raise PromptFormatError(f"{where}: both a 'system:' key and a '{USER_SEPARATOR}' line; use one")
        system = "\n".join(body_lines[: seps[0]]).strip()
        body_lines = body_lines[seps[0] + 1:]
    body = "\n".join(body_lines).strip()
    if not body:
        raise PromptFormatError(f"{where}: the user message (body) is empty")
    for part, source, offset in (("system", system, 0), ("body", body, end + 1)):
        if source is None:
            continue
        try:
            _env.parse(source)
        except jinja2.TemplateSyntaxError as e:
            raise PromptFormatError(f"{where}: Jinja syntax error in {part}, line {e.lineno}: {e.message}") from e
    return Prompt(
        id=fm.id, version=fm.version, description=fm.description, params=fm.params, schema_name=fm.schema_name,
        example=fm.example, system=system, body=body, path=path,
    )


def load_prompt(prompt_id: str, directory: Path | str | None = None) -> Prompt:
    """Load `prompts/<prompt_id>.md` (see the module docstring for the directory lookup)."""
    if not _ID_RE.match(prompt_id):
        raise PromptNotFoundError(f"bad prompt id {prompt_id!r}")
    folder = Path(directory) if directory is not None else prompts_dir()
    path = folder / f"{prompt_id}.md"
    if not path.is_file():
        known = ", ".join(p.stem for p in _prompt_files(folder)) or "none"
        raise PromptNotFoundError(f"no prompt {prompt_id!r}: {path} does not exist (known prompts: {known})")
    return parse_prompt(path.read_text(encoding="utf-8"), path=path, expected_id=prompt_id)


def _prompt_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.md") if p.name.lower() != "readme.md") if folder.is_dir() else []


def list_prompts(directory: Path | str | None = None) -> list[Prompt]:
    """Every prompt in the directory (all `*.md` but README.md); a bad file raises."""
    folder = Path(directory) if directory is not None else prompts_dir()
    return [load_prompt(p.stem, folder) for p in _prompt_files(folder)]


# --------------------------------------------------------------------------- version lock


def read_lock(directory: Path | str | None = None) -> dict[str, tuple[str, str]]:
    """`{id: (version, fingerprint)}` from VERSIONS.lock (empty if there is none)."""
    folder = Path(directory) if directory is not None else prompts_dir()
    path = folder / LOCK_NAME
    if not path.exists():
        return {}
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 3:
            raise PromptFormatError(f"{path}:{n}: expected 'id version sha256', got {line!r}")
        out[fields[0]] = (fields[1], fields[2])
    return out


def check_lock(directory: Path | str | None = None) -> list[str]:
    """Problems between the prompts and VERSIONS.lock; an empty list means all is consistent."""
    folder = Path(directory) if directory is not None else prompts_dir()
    lock = read_lock(folder)
    problems = []
    prompts = list_prompts(folder)
    for p in prompts:
        if p.id not in lock:
            problems.append(f"{p.id}: not in {LOCK_NAME}; run `schedmate llm lock-prompts`")
            continue
        version, sha = lock[p.id]
        if sha != p.fingerprint and version == p.version:
            problems.append(f"{p.id}: template/params changed but version is still {p.version}; bump `version`")
        elif (version, sha) != (p.version, p.fingerprint):
            problems.append(f"{p.id}: version {version} -> {p.version} not recorded; run `schedmate llm lock-prompts`")
    for stale in sorted(set(lock) - {p.id for p in prompts}):
        problems.append(f"{stale}: in {LOCK_NAME} but no prompts/{stale}.md; run `schedmate llm lock-prompts`")
    return problems


def update_lock(directory: Path | str | None = None, force: bool = False) -> list[str]:
    """Rewrite VERSIONS.lock from the prompts; returns what changed.

    Refuses (PromptError) when a prompt changed without a version bump, unless `force`.
    """
    folder = Path(directory) if directory is not None else prompts_dir()
    lock = read_lock(folder)
    prompts = list_prompts(folder)
    unbumped = [p.id for p in prompts if p.id in lock and lock[p.id] != (p.version, p.fingerprint)
                and lock[p.id][0] == p.version]
    if unbumped and not force:
        raise PromptError(f"changed without a version bump: {', '.join(unbumped)}; bump their `version` first")
    changes = []
    for p in prompts:
        if lock.get(p.id) != (p.version, p.fingerprint):
            changes.append(f"{p.id}: {lock[p.id][0] if p.id in lock else '(new)'} -> {p.version}")
    changes += [f"{gone}: removed" for gone in sorted(set(lock) - {p.id for p in prompts})]
    lines = ["# prompt-id  version  sha256 of system+body+params+schema; written by `schedmate llm lock-prompts`"]
    lines += [f"{p.id}\t{p.version}\t{p.fingerprint}" for p in sorted(prompts, key=lambda p: p.id)]
    (folder / LOCK_NAME).write_text("\n".join(lines) + "\n")
    return changes
