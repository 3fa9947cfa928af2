"""The address policy and the credential rules for endpoint URLs, as plain functions."""
from __future__ import annotations

import ipaddress

import pytest

from evaluators.endpoints.address import AddressPolicy, AddressRefused, check_address, check_url
from evaluators.endpoints.credentials import display_url, scrub_secrets, url_credentials

STRICT = AddressPolicy.parse(allow_private=False)
DEVELOPMENT = AddressPolicy.parse(allow_private=True)


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.31.255.255", "192.168.0.1", "100.64.0.1", "169.254.10.10", "0.0.0.0",
    "0.1.2.3", "224.0.0.251", "239.255.255.250", "255.255.255.255", "240.0.0.1", "::1", "::", "fe80::1",
    "fc00::1", "fd00:ec2::254", "ff02::1", "::ffff:10.0.0.1", "::ffff:0:7f00:1", "::7f00:1", "64:ff9b::7f00:1",
    "2002:a00:1::", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "168.63.129.16", "100.100.100.200",
])
def test_internal_addresses_are_refused_by_the_production_policy(address: str) -> None:
    with pytest.raises(AddressRefused, match="not allowed"):
        check_address(ipaddress.ip_address(address), STRICT)


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:93.184.216.34"])
def test_public_addresses_pass_the_production_policy(address: str) -> None:
    check_address(ipaddress.ip_address(address), STRICT)


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "10.0.0.1", "192.168.1.1"])
def test_development_allows_private_and_loopback_addresses(address: str) -> None:
    check_address(ipaddress.ip_address(address), DEVELOPMENT)


@pytest.mark.parametrize("address", ["169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254", "0.0.0.0",
                                     "224.0.0.1", "168.63.129.16"])
def test_metadata_services_unspecified_and_multicast_addresses_are_refused_even_when_allow_listed(address: str) -> None:
    everything = AddressPolicy.parse(allow_private=True, allowed=["0.0.0.0/0", "::/0"])
    with pytest.raises(AddressRefused):
        check_address(ipaddress.ip_address(address), everything)


def test_the_allow_list_takes_networks_addresses_and_host_names() -> None:
    policy = AddressPolicy.parse(allow_private=False, allowed=["10.20.0.0/16", " 192.168.7.7 ", "[fd00::5]",
                                                               "GPU-box.lab.example."])
    check_address(ipaddress.ip_address("10.20.9.9"), policy)
    check_address(ipaddress.ip_address("::ffff:10.20.9.9"), policy)
    check_address(ipaddress.ip_address("192.168.7.7"), policy)
    check_address(ipaddress.ip_address("fd00::5"), policy)
    check_address(ipaddress.ip_address("10.99.0.1"), policy, host="gpu-box.lab.example")
    for refused in ["10.21.0.1", "192.168.7.8", "fd00::6"]:
        with pytest.raises(AddressRefused):
            check_address(ipaddress.ip_address(refused), policy)


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "http://10.0.0.1/", "10.0.0.1:8000", "bad host", "*"])
def test_an_allow_list_entry_that_is_neither_a_network_nor_a_host_name_is_a_configuration_error(entry: str) -> None:
    with pytest.raises(ValueError, match="is not a network"):
        AddressPolicy.parse(allow_private=False, allowed=[entry])


@pytest.mark.parametrize("url", ["http://2130706433/v1", "http://0x7f000001/v1", "http://0177.0.0.1/v1",
                                 "http://127.1/v1", "http://1.2.3.0x4/v1", "http://017700000001/v1"])
def test_ip_addresses_in_unusual_notations_are_refused_in_every_mode(url: str) -> None:
    for policy in (STRICT, DEVELOPMENT):
        with pytest.raises(AddressRefused, match="a.b.c.d"):
            check_url(url, policy)


@pytest.mark.parametrize("url", ["http://metadata.google.internal/", "http://metadata/", "http://METADATA.goog./",
                                 "http://instance-data.ec2.internal/"])
def test_metadata_host_names_are_refused_without_asking_dns(url: str) -> None:
    with pytest.raises(AddressRefused, match="metadata"):
        check_url(url, DEVELOPMENT, resolve_timeout=0.0)


def test_localhost_is_refused_by_the_production_policy_and_allowed_in_development() -> None:
    with pytest.raises(AddressRefused):
        check_url("http://localhost:8000/v1", STRICT)
    check_url("http://localhost:8000/v1", DEVELOPMENT)


def test_credentials_in_a_url_are_named_without_their_values() -> None:
    found = url_credentials("https://ann:hunter2@gw.example/v1?api-version=2024&api-key=sk-1&Token=t&sig=s")
    assert found == ["a user name or password before the host (…@)", "query parameter 'api-key'",
                     "query parameter 'Token'", "query parameter 'sig'"]
    assert url_credentials("https://gw.example/openai/v1?api-version=2024-02-01&model=x") == []


def test_display_urls_drop_user_info_and_secret_query_parameters() -> None:
    assert (display_url("https://ann:hunter2@gw.example:8443/v1/chat/completions?api-key=sk-1&api-version=2024#x")
            == "https://gw.example:8443/v1/chat/completions?api-version=2024")
    assert display_url("http://[::1]:8000/v1?access_token=abc") == "http://[::1]:8000/v1"


def test_secrets_in_free_text_are_scrubbed() -> None:
    text = ("HTTPConnectionPool(host='gw', port=80): Max retries exceeded with url: "
            "/v1/chat/completions?api-key=sk-1&api-version=2024 (via https://ann:hunter2@gw.example/v1)")
    scrubbed = scrub_secrets(text)
    assert "sk-1" not in scrubbed and "hunter2" not in scrubbed and "ann" not in scrubbed
    assert "api-version=2024" in scrubbed and "https://gw.example/v1" in scrubbed
