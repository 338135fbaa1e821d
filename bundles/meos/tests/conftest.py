"""What the tests of this folder share."""

import pytest

from bundle_client import Bundle


@pytest.fixture(scope="module")
def bundle():
    """One bundle process, with the test road network, for a module's tests."""
    b = Bundle()
    yield b
    assert b.close() == 0
