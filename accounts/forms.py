"""Log-in forms of the site and the admin, refused for a while after repeated failures."""
from __future__ import annotations

import math
import time
from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm, UserCreationForm
from django.urls import reverse

from accounts.models import ApiToken, Membership
from accounts.selectors import client_ip, login_locked_until, login_needs_proof
from accounts.services import login_failure_record, login_proof_send, login_success_record


def refuse_if_locked(*, username: str, ip: str) -> None:
    until = login_locked_until(username=username, ip=ip)
    if until is not None:
        minutes = max(1, math.ceil((until.timestamp() - time.time()) / 60))
        raise forms.ValidationError(
            "Too many failed log-ins for this account from your address, or from your address in all; "
            "try again in %(minutes)s minute%(plural)s. Logging in from elsewhere is not affected.",
            code="locked_out", params={"minutes": minutes, "plural": "" if minutes == 1 else "s"})


class ThrottledLoginMixin:
    """Checks the lock before the password, and counts the failures the password check finds.

    A locked user name or address is refused even with the right password: otherwise the lock
    would only slow a guesser down to the rate at which it learns which guess was right.
    """

    request: Any
    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        password = self.cleaned_data.get("password") or ""
        if not (username and password):
            return super().clean()  # type: ignore[misc]
        ip = client_ip(self.request)
        refuse_if_locked(username=username, ip=ip)
        try:
            cleaned = super().clean()  # type: ignore[misc]
        except forms.ValidationError:
            if self.get_user() is None:  # type: ignore[attr-defined]
                login_failure_record(username=username, ip=ip)
            raise
        if login_needs_proof(username=username):
            self._ask_for_proof()
        login_success_record(username=username, ip=ip)
        return cleaned

    def _ask_for_proof(self) -> None:
        """Past the account's cap of failed log-ins a right password alone is not enough: its owner
        is mailed a one-time link that logs in, and the form says so (nobody is logged in here)."""
        user = self.get_user()  # type: ignore[attr-defined]
        request = self.request
        mailed = login_proof_send(user=user, link=lambda secret: request.build_absolute_uri(
            reverse("login-proof", args=[secret])))
        if mailed:
            raise forms.ValidationError(
                "This account has had many failed log-ins lately, so its password alone does not open it: "
                "we have e-mailed a one-time log-in link to the account's address. It works for a few minutes; "
                "if several mails came, any of their links works.", code="proof_required")
        raise forms.ValidationError(
            "This account has had many failed log-ins lately, so its password alone does not open it, and it "
            "has no e-mail address to send a log-in link to; try again tomorrow, or ask the site's operators.",
            code="proof_required")


class LoginForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


class ThrottledPasswordChangeForm(PasswordChangeForm):
    """The old password is a guess like a log-in's: wrong ones count against the same counters, and
    a locked user name and address are refused before the password is checked."""

    request: Any = None

    def clean_old_password(self) -> str:
        username, ip = self.user.get_username(), client_ip(self.request)
        refuse_if_locked(username=username, ip=ip)
        try:
            old_password: str = super().clean_old_password()
        except forms.ValidationError:
            login_failure_record(username=username, ip=ip)
            raise
        return old_password


class SignupForm(UserCreationForm):
    """A user name and a password; the e-mail address is optional and serves password resets only."""

    email = forms.EmailField(required=False, label="E-mail (optional)",
                             help_text="Only to send a link if you forget your password.")

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class EmailForm(forms.Form):
    email = forms.EmailField(required=False, label="E-mail for password resets")


class TeamForm(forms.Form):
    name = forms.CharField(max_length=120, label="Team name")


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class TokenForm(forms.Form):
    name = forms.CharField(max_length=80, label="What it is for", initial="CLI")
    scope = forms.ChoiceField(choices=ApiToken.Scope.choices, initial=ApiToken.Scope.WRITE)
