"""Forms of the team and account pages (each posts with Django's CSRF token)."""

from __future__ import annotations

from django import forms

from lineage_server.accounts.models import Role
from lineage_server.accounts.selectors import NO_SUCH_USER, active_user_named


class TokenForm(forms.Form):
    name = forms.CharField(max_length=128, help_text="What the token is for, e.g. a job or a pipeline.")


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)

    def clean_username(self) -> object:
        username = self.cleaned_data["username"]
        user = active_user_named(username)
        if user is None:
            raise forms.ValidationError(NO_SUCH_USER.format(username=username))
        return user


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)
