import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2 from the offline package (loaded once per session)."""
    from schedmate.history.embed import MiniLMEmbedder

    return MiniLMEmbedder()
