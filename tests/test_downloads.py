"""get_file: caching under the Keras home, hash checks, extraction that cannot escape its
folder; every download comes from a local server on 127.0.0.1."""
import hashlib
import io
import os
import tarfile
import zipfile

import pytest

from trainlib.downloads import extract_archive, get_file, hash_file, keras_home, validate_file
from trainlib.keras.utils import get_file as keras_get_file
from tests.http_server import serve


@pytest.fixture
def site(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    home = tmp_path / "home"
    monkeypatch.setenv("KERAS_HOME", str(home))
    with serve(root) as (url, requests):
        yield root, url, requests, home


def test_keras_home_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    assert keras_home() == str(tmp_path / "kh")
    monkeypatch.delenv("KERAS_HOME")
    assert keras_home() == os.path.join(os.path.expanduser("~"), ".keras")


def test_download_lands_in_the_cache_and_is_reused(site):
    root, url, requests, home = site
    (root / "data.csv").write_bytes(b"a,b\n1,2\n")
    path = keras_get_file(origin=url + "data.csv")
    assert path == str(home / "datasets" / "data.csv")
    assert open(path, "rb").read() == b"a,b\n1,2\n"
    assert get_file("data.csv", origin=url + "data.csv") == path
    assert len(requests) == 1  # the second call read the cache
    get_file("data.csv", origin=url + "data.csv", force_download=True)
    assert len(requests) == 2


def test_cache_dir_and_subdir(site, tmp_path):
    root, url, _, _ = site
    (root / "f.bin").write_bytes(b"x")
    path = get_file(origin=url + "f.bin", cache_dir=tmp_path / "c", cache_subdir="models")
    assert path == str(tmp_path / "c" / "models" / "f.bin")


def test_hashes_sha256_and_md5(site):
    root, url, requests, _ = site
    payload = b"payload" * 100
    (root / "p.bin").write_bytes(payload)
    sha, md5 = hashlib.sha256(payload).hexdigest(), hashlib.md5(payload).hexdigest()
    path = get_file(origin=url + "p.bin", file_hash=sha)
    assert hash_file(path) == sha and hash_file(path, "md5") == md5
    assert validate_file(path, md5) and validate_file(path, sha)
    assert get_file(origin=url + "p.bin", md5_hash=md5) == path and len(requests) == 1
    # a stale cached file (wrong hash) is fetched again
    with open(path, "wb") as f:
        f.write(b"stale")
    get_file(origin=url + "p.bin", file_hash=sha)
    assert len(requests) == 2 and open(path, "rb").read() == payload


def test_a_corrupted_download_is_an_error_and_leaves_nothing(site):
    root, url, _, home = site
    (root / "p.bin").write_bytes(b"not what was promised")
    with pytest.raises(ValueError, match="hash does not match"):
        get_file(origin=url + "p.bin", file_hash="0" * 64)
    assert not (home / "datasets" / "p.bin").exists()


def test_a_missing_url_is_an_error_naming_it_and_leaves_nothing(site):
    _, url, _, home = site
    with pytest.raises(Exception, match="URL fetch failure on .*absent.bin: 404"):
        get_file(origin=url + "absent.bin")
    assert os.listdir(home / "datasets") == []


def test_fname_may_not_be_a_path(site):
    _, url, _, _ = site
    with pytest.raises(ValueError, match="cache_dir"):
        get_file("sub/x.bin", origin=url + "x.bin")
    with pytest.raises(ValueError, match="origin"):
        get_file("x.bin")


def _tar(path, members, mode="w:gz"):
    with tarfile.open(path, mode) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_extract_tar_and_zip(site):
    root, url, _, home = site
    _tar(root / "bundle.tar.gz", [("bundle/a.txt", b"A"), ("bundle/sub/b.txt", b"B")])
    with zipfile.ZipFile(root / "z.zip", "w") as z:
        z.writestr("z/c.txt", "C")
    out = get_file(origin=url + "bundle.tar.gz", extract=True)
    assert out == str(home / "datasets" / "bundle.tar.gz")
    assert (home / "datasets" / "bundle.tar.gz" / "bundle" / "sub" / "b.txt").read_bytes() == b"B"
    out = get_file("z.zip", origin=url + "z.zip", extract=True)
    assert out == str(home / "datasets" / "z_extracted")
    assert (home / "datasets" / "z_extracted" / "z" / "c.txt").read_text() == "C"
    out = get_file("plain", origin=url + "bundle.tar.gz", untar=True)
    assert out == str(home / "datasets" / "plain")
    assert (home / "datasets" / "plain_archive").exists()
    assert (home / "datasets" / "plain" / "bundle" / "a.txt").read_bytes() == b"A"


def test_tar_members_cannot_escape(tmp_path):
    archive = tmp_path / "evil.tar"
    _tar(archive, [("../escaped.txt", b"x"), ("/tmp/abs_escape_trainlib.txt", b"x"),
                   ("ok.txt", b"fine")], mode="w")
    with tarfile.open(archive, "a") as tar:
        link = tarfile.TarInfo("link")
        link.type, link.linkname = tarfile.SYMTYPE, "../../outside"
        tar.addfile(link)
    target = tmp_path / "out"
    with pytest.warns(UserWarning, match="Skipping invalid path"):
        assert extract_archive(archive, target)
    assert (target / "ok.txt").read_bytes() == b"fine"
    assert not (tmp_path / "escaped.txt").exists()
    assert not os.path.lexists(target / "link")
    assert sorted(os.listdir(target)) == ["ok.txt"]


def test_zip_members_cannot_escape(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("../escaped.txt", "x")
        z.writestr("inside/ok.txt", "fine")
    target = tmp_path / "out"
    with pytest.warns(UserWarning, match="Skipping invalid path"):
        assert extract_archive(archive, target)
    assert not (tmp_path / "escaped.txt").exists()
    assert (target / "inside" / "ok.txt").read_text() == "fine"


def test_not_an_archive(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("hello")
    assert not extract_archive(f, tmp_path / "out")
    assert not extract_archive(f, tmp_path / "out", archive_format=None)
