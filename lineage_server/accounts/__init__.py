"""Accounts: agent tokens (and, later, users and teams)."""
