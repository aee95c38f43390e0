"""URLs: a model's `base_url` is a model server's (issue 21, item 14), and what is shown of a
URL, or of a message quoting one, holds none of its secrets (item 7)."""

from __future__ import annotations

import ipaddress
from urllib.parse import quote

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agentspec.contract.urls import endpoint_problem, masked, redacted, scrubbed, url_secrets

# model servers ------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "gopher://example.com/", "not a url", "ftp://h/", "http://",
    "http://169.254.169.254/latest/meta-data", "http://2852039166/", "http://0xa9fea9fe/",
    "http://0251.0376.0251.0376/", "http://[::ffff:169.254.169.254]/", "http://[fe80::1]/",
    "http://[fd00:ec2::254]/", "http://metadata.google.internal/", "http://0.0.0.0:80/",
    "http://h:99999/", "http://h/\x00", "javascript:alert(1)"])
def test_what_is_no_model_server_is_refused(url: str) -> None:
    assert endpoint_problem(url) is not None


@pytest.mark.parametrize("url", [
    "http://localhost:8000/v1", "https://api.example.com/v1", "http://10.0.0.5:11434",
    "http://[::1]:8000/v1", "${env.LLM_URL}", "https://${env.LLM_HOST}/v1"])
def test_model_servers_pass(url: str) -> None:
    assert endpoint_problem(url) is None


@given(st.integers(0, 2**16 - 1))
def test_every_spelling_of_a_link_local_address_is_refused(low: int) -> None:
    address = int(ipaddress.IPv4Address("169.254.0.0")) + low
    for host in (str(ipaddress.IPv4Address(address)), str(address), hex(address),
                 f"[::ffff:{ipaddress.IPv4Address(address)}]"):
        assert endpoint_problem(f"http://{host}/v1") is not None, host


def test_literal_credentials_in_a_url_are_named() -> None:
    assert url_secrets("https://bob:pw@h/v1?token=t&v=1") == [
        "a password", "the query parameter `token`"]
    assert url_secrets("https://sk-abc@h/v1") == ["a user name that may be a token"]
    assert url_secrets("https://bob:${env.PW}@h/v1?token=${env.T}&v=1") == []


# what is shown of a URL ----------------------------------------------------------------------

RESERVED = ":/?#[]@!$&'()*+,;=% \"<>\\^`{|}~\t"
passwords = st.text(st.sampled_from(RESERVED) | st.characters(codec="utf-8",
                                                               exclude_categories=["Cs"]),
                    min_size=3, max_size=24).filter(
    # a password found in the rest of the URL (`age` in `agent`) would be "seen" though masked
    lambda p: p.strip() == p and "\n" not in p and not any(
        p in part or quote(p, safe="") in part
        for part in ("postgresql://agent:***@db.example.com:5432/jobs?sslmode=require",
                     "https://user:***@llm.example.com/v1?key=***")))


def _urls(password: str) -> list[str]:
    return [f"postgresql://agent:{password}@db.example.com:5432/jobs",
            f"postgresql://agent:{quote(password, safe='')}@db.example.com/jobs",
            f"postgresql://agent:{password}@db.example.com/jobs?sslmode=require",
            f"https://user:{password}@llm.example.com/v1?key={quote(password, safe='')}"]


@given(password=passwords)
def test_no_password_survives_redaction(password: str) -> None:
    for url in _urls(password):
        shown = redacted(url)
        assert password not in shown and quote(password, safe="") not in shown, (url, shown)


@given(password=passwords, before=st.sampled_from([
    "invalid URI query parameter: ", 'could not translate host name "', "connection to ",
    'invalid percent-encoded token: "', "", "missing \"=\" after \"", "at ", "(",
    "invalid integer value \"", "FATAL:  password authentication failed for ",
]), after=st.sampled_from(['"', "", " failed", '" to address', ")", ":5432 refused"]))
def test_no_password_survives_scrubbing_a_message_quoting_its_url(
        password: str, before: str, after: str) -> None:
    assume(password not in before + " " + after)
    for url in _urls(password):
        _, _, userinfo_on = url.partition("://")
        for quoted in (url, userinfo_on, userinfo_on.split("@")[0], password,
                       f"{password}@db.example.com"):
            text = scrubbed(before + quoted + after, url)
            assert password not in text and quote(password, safe="") not in text, (url, text)


def test_a_connection_string_password_is_masked() -> None:
    assert redacted("host=db password='p w' user=x") == "host=db password=*** user=x"
    assert "hunter2" not in scrubbed("dsn: host=db password=hunter2 port=5")


def test_one_scrubber_masks_a_lone_user_name_and_keeps_a_named_user() -> None:
    """The one URL scrubber (the runtime's error messages and the stores' alike): a user name
    without a password may be a token, so it goes; beside a password it names a user."""
    text = "at https://tok3n@h/p (see postgresql://alice:pw@db/x) [http://[::1]:8/v?key=k]"
    assert scrubbed(text) == ("at https://***@h/p (see postgresql://alice:***@db/x) "
                              "[http://[::1]:8/v?key=***")  # a query value runs to a space
    assert masked("https://tok3n@h/p") == "https://***@h/p"
    assert masked("sqlite:////a@b.db") == "sqlite:////a@b.db"  # a path, no user
