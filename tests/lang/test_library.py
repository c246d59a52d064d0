"""PlaybookLibrary: ordered directories, validation once per content, signatures."""

import shutil
from pathlib import Path

import pytest

from sea.errors import PlaybookError, SeaError
from sea.lang.library import PlaybookLibrary, PlaybookNotFound

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    shutil.copytree(DATA / "library", bundled)
    user.mkdir()
    return user, bundled


def test_names_get_path_and_hash(dirs: tuple[Path, Path]) -> None:
    user, bundled = dirs
    library = PlaybookLibrary([user, bundled])
    assert library.names() == ["sub_speak", "summarize", "web_lookup"]
    playbook = library.get("summarize")
    assert playbook.name == "summarize"
    assert library.path("summarize") == bundled / "summarize.json"
    assert len(library.content_hash("summarize")) == 64


def test_earlier_directories_win(dirs: tuple[Path, Path]) -> None:
    user, bundled = dirs
    text = (bundled / "summarize.json").read_text().replace("Summarize a text.", "Mine.")
    (user / "my_summarize.json").write_text(text)
    library = PlaybookLibrary([user, bundled])
    assert library.get("summarize").description == "Mine."
    assert library.shadowed() == [("summarize", bundled / "summarize.json")]


def test_validated_once_per_content_and_revalidated_after_edit(dirs: tuple[Path, Path]) -> None:
    _, bundled = dirs
    library = PlaybookLibrary([bundled])
    first = library.get("summarize")
    assert library.get("summarize") is first
    path = bundled / "summarize.json"
    path.write_text(path.read_text().replace("Summarize a text.", "Changed."))
    second = library.get("summarize")
    assert second is not first and second.description == "Changed."


def test_unknown_name_is_a_coded_error(dirs: tuple[Path, Path]) -> None:
    with pytest.raises(PlaybookNotFound) as info:
        PlaybookLibrary(list(dirs)).get("nope")
    assert isinstance(info.value, SeaError)
    assert info.value.code == "SEA050"


def test_invalid_file_raises_playbook_error(dirs: tuple[Path, Path]) -> None:
    user, bundled = dirs
    (user / "broken.json").write_text(
        '{"name": "broken", "description": "", "start_node": "a", '
        '"nodes": [{"id": "a", "type": "llm", "tools": []}]}'
    )
    library = PlaybookLibrary([user, bundled])
    with pytest.raises(PlaybookError) as info:
        library.get("broken")
    assert [d.code for d in info.value.diagnostics] == ["SEA011"]


def test_router_callable_and_signatures(dirs: tuple[Path, Path]) -> None:
    library = PlaybookLibrary(list(dirs))
    assert [p.name for p in library.router_callable()] == ["summarize", "web_lookup"]
    signature = library.signature("summarize")
    assert signature is not None
    assert dict(signature.params) == {"text": True, "style": False}
    assert signature.outputs == ("summary",)
    assert library.signature("nope") is None


def test_missing_directories_are_skipped(tmp_path: Path) -> None:
    assert PlaybookLibrary([tmp_path / "absent"]).names() == []


def test_bundled_puts_the_bundled_directory_last(tmp_path: Path) -> None:
    from sea.resources import bundled_playbooks_dir

    library = PlaybookLibrary.bundled([tmp_path])
    assert library.dirs == [tmp_path, bundled_playbooks_dir()]


def test_package_exports_the_front_end_lazily() -> None:
    import sea

    assert sea.PlaybookLibrary is PlaybookLibrary
    from sea.lang.loader import check_document

    assert sea.check_document is check_document


def test_package_exports_the_host_api_lazily() -> None:
    import sea
    from sea.engine.limits import Limits
    from sea.host.result import PulseResult
    from sea.host.runtime import Runtime
    from sea.llm.models import ModelSet

    assert (sea.Runtime, sea.ModelSet, sea.Limits, sea.PulseResult) == (
        Runtime,
        ModelSet,
        Limits,
        PulseResult,
    )
    assert set(sea.__all__) >= {"Runtime", "ModelSet", "Limits", "PulseResult"}
