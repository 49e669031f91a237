import pytest

from backend.store.db import Database


@pytest.fixture
async def db(tmp_path):
    """A real, migrated SQLite database in the test's temporary folder."""
    database = await Database.open(tmp_path / "jobctrl.db")
    try:
        yield database
    finally:
        await database.close()
