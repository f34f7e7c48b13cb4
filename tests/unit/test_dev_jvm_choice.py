"""hmsproxy.dev.jvm.java_executable: Java 17 as before (JAVA_HOME, then PATH); a version needing a newer
Java (Hive 4.2: 21) gets the first JDK new enough among JAVA_HOME's, PATH's and those under JDK_ROOT."""

from __future__ import annotations

import pytest

from hmsproxy.dev import jvm


def fake_jdk(root, name: str, version: str | None):
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\n")
    (home / "bin" / "java").chmod(0o755)
    if version is not None:
        (home / "release").write_text(f'JAVA_VERSION_DATE="2026-04-21"\nJAVA_VERSION="{version}"\n')
    return home


@pytest.fixture
def jdks(tmp_path, monkeypatch):
    root = tmp_path / "jvm"
    old, new, bare = fake_jdk(root, "a-17", "17.0.15"), fake_jdk(root, "b-25", "25.0.3"), fake_jdk(root, "c-none", None)
    monkeypatch.setattr(jvm, "JDK_ROOT", str(root))
    monkeypatch.setenv("JAVA_HOME", str(old))
    return old, new, bare


def test_the_release_file_names_the_feature_release(jdks):
    old, new, bare = jdks
    assert (jvm.java_release(old), jvm.java_release(new), jvm.java_release(bare)) == (17, 25, None)


def test_java_17_is_java_home_s_and_a_newer_one_is_found_beside_it(jdks):
    old, new, _ = jdks
    assert jvm.java_executable() == str(old / "bin" / "java")
    assert jvm.java_executable(21) == str(new / "bin" / "java")


def test_java_home_wins_when_it_is_new_enough(jdks, monkeypatch):
    _, new, _ = jdks
    monkeypatch.setenv("JAVA_HOME", str(new))
    assert jvm.java_executable(21) == str(new / "bin" / "java")


def test_no_jdk_new_enough_says_so_in_one_line(jdks):
    with pytest.raises(RuntimeError, match=r"^no Java 26 or newer found \(JAVA_HOME, PATH, .*\)$"):
        jvm.java_executable(26)
