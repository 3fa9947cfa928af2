"""What is struck out of a text a stranger reads: every form in which the team's endpoint URL, its
own path, its API key and the model ids it lists may be quoted, and nothing of the API's common words."""
from __future__ import annotations

from urllib.parse import quote

from submissions.crypto import encrypt_secret
from submissions.endpoint_privacy import KEY_SHOWN, MODEL_SHOWN, URL_SHOWN, endpoint_marks, struck
from submissions.models import ModelEntry, Submission

SECRET_URL = "https://gw.example.com/e401-sekrit-DELTA/v1/chat/completions"
API_KEY = "sk-abcD1234567890efghijklmnopqrstWXYZ"


def _submission(url: str = SECRET_URL, *, key: str = API_KEY, listed: list[str] | None = None,
                name: str = "Oracle", endpoint_model: str = "") -> Submission:
    return Submission(endpoint_url=url, endpoint_model=endpoint_model, api_key_encrypted=encrypt_secret(key),
                      endpoint_listed_models=listed or [], model=ModelEntry(id=1, name=name))


def _struck(text: str, submission: Submission | None = None) -> str:
    return struck(text, endpoint_marks(submission or _submission()))


def test_an_error_quoting_another_route_of_the_endpoint_shows_neither_its_host_nor_its_path():
    shown = _struck("GET https://gw.example.com/e401-sekrit-DELTA/v1/models answered 401")
    assert "gw.example.com" not in shown and "e401-sekrit-DELTA" not in shown
    assert shown == f"GET {URL_SHOWN}/models answered 401"


def test_the_endpoint_s_own_path_is_struck_where_it_is_quoted_without_its_host():
    for text in ("POST /e401-sekrit-DELTA/v1/chat/completions: 404", "no deployment e401-sekrit-DELTA here",
                 "gw.example.com:443/e401-sekrit-DELTA failed"):
        assert "e401-sekrit-DELTA" not in _struck(text), text


def test_the_endpoint_is_struck_in_its_json_escaped_and_url_encoded_forms_and_in_any_case():
    for text in ('{"url": "https:\\/\\/gw.example.com\\/e401-sekrit-DELTA\\/v1"}',
                 '"https:\\\\/\\\\/gw.example.com\\\\/e401-sekrit-DELTA\\\\/v1"',
                 "?target=" + quote(SECRET_URL, safe=""), "HTTPS://GW.EXAMPLE.COM/E401-SEKRIT-DELTA/v1",
                 "İSTANBUL proxy to HTTPS://GW.EXAMPLE.COM/E401-SEKRIT-DELTA/v1"):
        shown = _struck(text).lower()
        assert "gw.example.com" not in shown and "e401-sekrit-delta" not in shown, text


def test_the_path_every_openai_compatible_endpoint_has_stays_in_text():
    submission = _submission("https://api.lab.example/v1/chat/completions")
    text = "the client posts to /v1/chat/completions and lists /v1/models, as every client does"
    assert _struck(text, submission) == text
    assert _struck("https://api.lab.example/v1/models", submission) == f"{URL_SHOWN}/v1/models"


def test_a_reply_echoing_the_api_key_whole_in_a_piece_or_masked_by_the_provider_shows_none_of_it():
    texts = {
        "whole": f"my key is {API_KEY}.",
        "openai": "Incorrect API key provided: sk-abcD*****************************WXYZ. You can find your key",
        "ellipsis": "key sk-abcD…WXYZ was refused",
        "prefix": "key sk-abcD12345678 was refused",
        "suffix": "ending in opqrstWXYZ",
    }
    for name, text in texts.items():
        shown = _struck(text)
        assert KEY_SHOWN in shown and "WXYZ" not in shown and "abcD" not in shown, (name, shown)
    # A key's common prefix, markdown and star ratings name nothing of this key.
    ordinary = "OpenAI keys start with sk- and markdown ***bold*** stays; so does a star rating of 4/5 ****"
    assert _struck(ordinary) == ordinary


def test_model_ids_the_endpoint_lists_are_struck_but_the_model_s_published_name_is_not():
    submission = _submission(listed=["lab-internal-ckpt-0427", "oracle"], name="Oracle")
    shown = _struck("answered by lab-internal-ckpt-0427, published as Oracle (oracle)", submission)
    assert shown == f"answered by {MODEL_SHOWN}, published as Oracle (oracle)"


def test_a_short_path_of_the_endpoint_s_own_is_struck_only_where_it_is_not_part_of_a_longer_word():
    submission = _submission("https://10.0.0.1/lab/v1")
    shown = _struck("the /lab route of 10.0.0.1, not /laboratory nor 10.0.0.12", submission)
    assert shown == f"the {URL_SHOWN} route of {URL_SHOWN}, not /laboratory nor 10.0.0.12"
