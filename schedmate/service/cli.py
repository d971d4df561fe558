"""`schedmate serve` and `schedmate token create|revoke|list`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DEFAULT_DB = "~/.schedmate/service.sqlite"


def _db(db: str) -> str:
    if "://" in db:
        return db
    p = Path(db).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    return str(p)


def _store(db: str):  # Store is imported lazily: the serve extra may be missing
    from schedmate.service.db import Store, StoreUnavailable

    try:
        return Store(_db(db))
    except StoreUnavailable as e:
        typer.echo(f"error: database {db}: {e}", err=True)
        raise typer.Exit(2) from None


DbOpt = Annotated[str, typer.Option(help="SQLite path or a SQLAlchemy URL (postgresql://user@host/db).")]


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    token_app = typer.Typer(rich_markup_mode="markdown", help="Client tokens of the annotation service.",
                            no_args_is_help=True)
    app.add_typer(token_app, name="token")

    @app.command("serve")
    def serve(
        host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="TCP port.")] = 8800,
        db: DbOpt = DEFAULT_DB,
        root: Annotated[list[Path] | None, typer.Option(
            help="Directory under which submitted workdirs and log paths may be read (repeatable).")] = None,
        llm: Annotated[bool, typer.Option(help="Refine answers with the local LLM (behind a bounded queue).")] = False,
        rate: Annotated[float, typer.Option(help="Requests per second allowed per client.")] = 200.0,
        durability: Annotated[str, typer.Option(
            help="SQLite: `full` fsyncs each group commit, `normal` survives a crash of the service only.")] = "full",
        history: Annotated[str, typer.Option(
            help="History store: `memory` (rebuilt from the database at start) or `chroma` (persisted).")] = "memory",
        history_path: Annotated[Path | None, typer.Option(help="chroma: its directory.")] = None,
        uploads_dir: Annotated[Path | None, typer.Option(
            help="Where uploaded code is unpacked (default: uploads/ beside the database).")] = None,
        admission_without_token: Annotated[bool, typer.Option(
            help="Let the Kubernetes admission webhook in without a token (the API server cannot send one).")] = False,
        tls_cert: Annotated[Path | None, typer.Option(help="Serve HTTPS with this certificate (PEM).")] = None,
        tls_key: Annotated[Path | None, typer.Option(help="Its private key (PEM).")] = None,
        log_level: Annotated[str, typer.Option(help="warning, or info for one JSON line per request.")] = "warning",
    ) -> None:
        """Run the annotation service (OpenAPI at `/docs`).

        Example: `schedmate token create ci --scopes submit,read` then `schedmate serve --root /shared/jobs`
        and `curl -H "Authorization: Bearer $TOKEN" -d '{"id": "j1", "command": "bash train.sh"}'
        http://127.0.0.1:8800/v1/jobs`.
        """
        try:
            import uvicorn

            from schedmate.service.app import Settings, create_app
            from schedmate.service.db import StoreUnavailable
            from schedmate.service.metrics import setup_logging
        except ModuleNotFoundError as e:
            typer.echo(f"error: the service needs the serve extra (pip install -e '.[serve]'): {e}", err=True)
            raise typer.Exit(2) from None
        if (tls_cert is None) != (tls_key is None):
            typer.echo("error: --tls-cert and --tls-key go together", err=True)
            raise typer.Exit(2)
        setup_logging(log_level)
        settings = Settings(db=_db(db), roots=list(root or []), use_llm=llm, rate_per_s=rate, burst=2 * rate,
                            durability=durability, history=history,
                            history_path=str(history_path) if history_path else None, uploads_dir=uploads_dir,
                            admission_token=not admission_without_token)
        try:
            service = create_app(settings)
        except (StoreUnavailable, ValueError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        uvicorn.run(service, host=host, port=port, log_level=log_level.lower(), access_log=False,
                    ssl_certfile=str(tls_cert) if tls_cert else None, ssl_keyfile=str(tls_key) if tls_key else None,
                    timeout_keep_alive=30, limit_concurrency=2048, backlog=4096)

    @token_app.command("create")
    def create(
        name: Annotated[str, typer.Argument(help="Client name (unique).")],
        scopes: Annotated[str, typer.Option(help="Comma-separated: submit, read, admin.")] = "submit,read",
        db: DbOpt = DEFAULT_DB,
    ) -> None:
        """Create a client token; it is printed once, on the last line (only its sha256 is stored)."""
        from schedmate.service.auth import create_token, parse_scopes

        try:
            token = create_token(_store(db), name, parse_scopes(scopes))
        except ValueError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"token for {name} ({scopes}); store it now, it is not shown again:")
        typer.echo(token)

    @token_app.command("revoke")
    def revoke(name: Annotated[str, typer.Argument(help="Client name.")], db: DbOpt = DEFAULT_DB) -> None:
        """Remove a client: its token stops working (a running service notices within 10 s)."""
        if not _store(db).remove_client(name):
            typer.echo(f"error: no client {name!r}", err=True)
            raise typer.Exit(2)
        typer.echo(f"revoked {name}")

    @token_app.command("list")
    def list_(db: DbOpt = DEFAULT_DB) -> None:
        """Clients and their scopes (tokens are not stored, so not shown)."""
        for c in _store(db).clients():
            typer.echo(f"{c['name']}\t{','.join(c['scopes'])}")
