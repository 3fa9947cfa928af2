"""Sign-up, the account page and a team's actions: teams, members and API tokens (the team's page,
which lists its submissions, is ``submissions.team_views``)."""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm, PasswordResetForm
from django.contrib.auth.models import User
from django.contrib.auth.views import PasswordChangeView, PasswordResetView
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_POST

from accounts.forms import EmailForm, MemberForm, SignupForm, TeamForm, ThrottledPasswordChangeForm, TokenForm
from accounts.models import ApiToken, Team
from accounts.selectors import client_ip, user_memberships, user_role
from accounts.services import (
    AccountError,
    ResetVerdict,
    login_proof_use,
    member_add,
    member_remove,
    password_reset_request_record,
    signup_release,
    signup_reserve,
    team_create,
    token_create,
    token_revoke,
    user_email_set,
)


class SignedInRequest(HttpRequest):
    """A request to a view behind ``login_required``: its user is never anonymous."""

    user: User


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if not signup_reserve(ip=client_ip(request)):
            form.add_error(None, "Too many sign-ups from your address, or on the site, in the last hour; "
                                 "try again later. Nothing was created.")
            return render(request, "accounts/signup.html", {"form": form})
        try:
            with transaction.atomic():
                user = form.save()
        except IntegrityError:  # the same user name, created meanwhile by another request
            signup_release()
            form.add_error("username", "A user with that username already exists.")
            return render(request, "accounts/signup.html", {"form": form})
        login(request, user)
        messages.success(request, "Welcome. Create a team, or ask a team's owner to add you.")
        return redirect("account")
    return render(request, "accounts/signup.html", {"form": form})


class PasswordChange(PasswordChangeView):
    """A new password, checked by the same validators as at sign-up; the session stays logged in."""

    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("account")
    form_class = ThrottledPasswordChangeForm

    def get_form(self, form_class: Any = None) -> PasswordChangeForm:
        form = super().get_form(form_class)
        if isinstance(form, ThrottledPasswordChangeForm):
            form.request = self.request  # its guesses are counted against the client's address
        return form

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        response = super().form_valid(form)
        messages.success(self.request, "Password changed.")
        return response


class PasswordReset(PasswordResetView):
    """Mails a one-time link to set a new password to the accounts with the address given; the page
    says the same whether or not an account has it. Too many requests from one address are refused;
    past the e-mail address's cap the page reads the same but no new mail goes out
    (``password_reset_request_record``)."""

    template_name = "registration/password_reset_form.html"

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        email = form.cleaned_data["email"]
        user = self.request.user
        own = bool(user.is_authenticated and user.email and user.email.casefold() == email.strip().casefold())
        verdict = password_reset_request_record(email=email, ip=client_ip(self.request), own_address=own)
        if verdict is ResetVerdict.REFUSED:
            form.add_error(None, "Too many password-reset requests from your address; try again in a few minutes.")
            return self.form_invalid(form)
        if verdict is ResetVerdict.QUIET:
            return HttpResponseRedirect(self.get_success_url())
        return super().form_valid(form)


def login_proof(request: HttpRequest, secret: str) -> HttpResponse:
    """The one-time log-in link mailed past an account's cap of failed log-ins. Opening it shows a
    button; the log-in happens on its POST, so a mail scanner fetching the link does not use it up."""
    if request.method != "POST":
        return render(request, "accounts/login_proof.html", {"secret": secret})
    user = login_proof_use(secret=secret)
    if user is None:
        return render(request, "accounts/login_proof.html", {"secret": secret, "spent": True}, status=410)
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(request, "Logged in with the mailed link. If you did not ask for it, change your password now.")
    return redirect("account")


@login_required
def account(request: SignedInRequest) -> HttpResponse:
    form = TeamForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            team = team_create(user=request.user, name=form.cleaned_data["name"])
        except AccountError as exc:
            form.add_error("name", str(exc))
        else:
            messages.success(request, f"Team {team.name} created; you are its owner.")
            return redirect("team", slug=team.slug)
    memberships = user_memberships(request.user)
    return render(request, "accounts/account.html", {"form": form, "memberships": memberships})


@login_required
@require_POST
def account_email(request: SignedInRequest) -> HttpResponse:
    form = EmailForm(request.POST)
    if form.is_valid():
        user_email_set(user=request.user, email=form.cleaned_data["email"])
        messages.success(request, "E-mail address saved: password-reset links go there." if form.cleaned_data["email"]
                         else "E-mail address removed: your password can no longer be reset by mail.")
    else:
        messages.error(request, "Not saved: " + " ".join(str(error) for error in form.errors.get(
            "email", ["give a valid e-mail address"])))
    return redirect("account")


def _member_team(request: HttpRequest, slug: str) -> tuple[Team, str]:
    team = get_object_or_404(Team, slug=slug)
    role = user_role(request.user, team.id)
    if role is None:
        raise Http404("no such team")
    return team, role


@login_required
@require_POST
def team_action(request: SignedInRequest, slug: str, action: str) -> HttpResponse:
    team, _ = _member_team(request, slug)
    try:
        if action == "add-member":
            form = MemberForm(request.POST)
            if form.is_valid():
                member_add(team=team, actor=request.user, username=form.cleaned_data["username"],
                           role=form.cleaned_data["role"])
                messages.success(request, f"{form.cleaned_data['username']} added.")
        elif action == "create-token":
            token_form = TokenForm(request.POST)
            if token_form.is_valid():
                _, text = token_create(team=team, user=request.user, name=token_form.cleaned_data["name"],
                                       scope=token_form.cleaned_data["scope"])
                # Shown on the next page view only, then gone: the site keeps just its digest.
                request.session["new_token"] = text
        elif action in ("remove-member", "leave"):
            member_id = request.POST.get("member", "") if action == "remove-member" else str(request.user.pk)
            user = get_user_model().objects.filter(pk=int(member_id)).first() if member_id.isdigit() else None
            if user is None:
                raise AccountError("no such member")
            member_remove(team=team, actor=request.user, user=user)
            if action == "leave":
                messages.success(request, f"You left {team.name}; your API tokens for it are revoked.")
                return redirect("account")
            messages.success(request, f"{user.get_username()} removed; their API tokens for the team are revoked.")
        elif action == "revoke-token":
            token = get_object_or_404(ApiToken, id=request.POST.get("token"), team=team)
            token_revoke(token=token, actor=request.user)
            messages.info(request, f"Token {token.prefix}… revoked.")
        else:
            raise Http404("unknown action")
    except AccountError as exc:
        messages.error(request, str(exc))
    return redirect("team", slug=team.slug)
