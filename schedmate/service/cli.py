"""`schedmate serve` and `schedmate token create`."""

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


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    token_app = typer.Typer(rich_markup_mode="markdown", help="Client tokens of the annotation service.", no_args_is_help=True)
    app.add_typer(token_app, name="token")

    @app.command("serve")
    def serve(
        host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="TCP port.")] = 8800,
        db: Annotated[str, typer.Option(help="SQLite path or a SQLAlchemy URL (postgresql://...).")] = DEFAULT_DB,
        root: Annotated[list[Path] | None, typer.Option(
            help="Directory under which submitted workdirs may be read (repeatable); none: no workdirs.")] = None,
        llm: Annotated[bool, typer.Option(help="Refine answers with the local LLM (behind a bounded queue).")] = False,
        rate: Annotated[float, typer.Option(help="Requests per second allowed per client.")] = 200.0,
    ) -> None:
        """Run the annotation service (OpenAPI at `/docs`).

        Example: `schedmate token create ci --scopes submit,read` then
        `schedmate serve --root /shared/jobs` and `curl -H "Authorization: Bearer $TOKEN" ...`.
        """
        try:
            import uvicorn

            from schedmate.service.app import Settings, create_app
        except ModuleNotFoundError as e:
            typer.echo(f"error: the service needs the serve extra (pip install -e '.[serve]'): {e}", err=True)
            raise typer.Exit(2) from None
        settings = Settings(db=_db(db), roots=list(root or []), use_llm=llm, rate_per_s=rate, burst=2 * rate)
        uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")

    @token_app.command("create")
    def create(
        name: Annotated[str, typer.Argument(help="Client name (unique).")],
        scopes: Annotated[str, typer.Option(help="Comma-separated: submit, read, admin.")] = "submit,read",
        db: Annotated[str, typer.Option(help="The service's database.")] = DEFAULT_DB,
    ) -> None:
        """Create a client token; it is printed once, on the last line (only its sha256 is stored)."""
        from schedmate.service.app import create_token
        from schedmate.service.db import Store

        try:
            token = create_token(Store(_db(db)), name, [s.strip() for s in scopes.split(",") if s.strip()])
        except ValueError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"token for {name} ({scopes}); store it now, it is not shown again:")
        typer.echo(token)
