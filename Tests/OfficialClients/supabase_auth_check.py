"""The official Supabase auth client (supabase_auth, PyPI) against the dev server.

Run by .ci/run: `python3 supabase_auth_check.py http://127.0.0.1:PORT/auth/v1 MAIL_DIR` (the
server's --mail-dir). Every error
must reach the client with its GoTrue code (it reads `code` only when the server echoes
X-Supabase-Api-Version), weak passwords with their reasons, and the everyday calls must work.
Exits non-zero on the first difference.
"""
import os
import sys
import uuid

from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

url = sys.argv[1]
mail_dir = sys.argv[2]
email = f"official-{uuid.uuid4().hex[:8]}@example.com"
client = SyncGoTrueClient(url=url, headers={"apikey": "anon"})


def expect_error(what, call, code, status, kind=AuthApiError):
    try:
        call()
    except kind as error:
        assert error.code == code, f"{what}: code {error.code!r}, expected {code!r}"
        assert error.status == status, f"{what}: status {error.status}, expected {status}"
        return error
    raise AssertionError(f"{what}: no error")


signed_up = client.sign_up({"email": email, "password": "password-official-1",
                            "options": {"data": {"name": "Ana", "theme": "dark"}}})
assert signed_up.user.email == email
assert signed_up.user.user_metadata == {"name": "Ana", "theme": "dark"}, signed_up.user.user_metadata
expect_error("duplicate sign-up", lambda: client.sign_up({"email": email, "password": "password-official-1"}),
             "user_already_exists", 422)
weak = expect_error("weak password", lambda: client.sign_up({"email": "x" + email, "password": "a"}),
                    "weak_password", 422, AuthWeakPasswordError)
assert list(weak.reasons) == ["length"], weak.reasons
expect_error("wrong password", lambda: client.sign_in_with_password({"email": email, "password": "wrong-one-1"}),
             "invalid_credentials", 400)
expect_error("over 72 bytes", lambda: client.sign_in_with_password({"email": email, "password": "p" * 80}),
             "invalid_credentials", 400)
session = client.sign_in_with_password({"email": email, "password": "password-official-1"})
assert session.session.access_token
assert client.get_user().user.email == email
updated = client.update_user({"data": {"theme": None, "age": 31}})
assert updated.user.user_metadata == {"name": "Ana", "age": 31}, updated.user.user_metadata
assert client.get_user().user.user_metadata == {"name": "Ana", "age": 31}
client.reauthenticate()
mails = [open(os.path.join(mail_dir, name)).read() for name in sorted(os.listdir(mail_dir))]
assert len(mails) == 1 and f"To: {email}" in mails[0], mails
code = next(line[len("Enter the code: "):] for line in mails[0].splitlines() if line.startswith("Enter the code: "))
assert len(code) == 6 and code.isdigit(), code
expect_error("second code within a minute", lambda: client.reauthenticate(), "over_email_send_rate_limit", 429)
client.update_user({"password": "password-official-2"})
expect_error("same password", lambda: client.update_user({"password": "password-official-2"}), "same_password", 422)
client.refresh_session()
client.sign_out()
expect_error("old password", lambda: client.sign_in_with_password({"email": email, "password": "password-official-1"}),
             "invalid_credentials", 400)
print("supabase_auth", "ok:", "sign-up with metadata, errors with codes, weak-password reasons, sign-in, user,",
      "metadata update, reauthentication code, password change, refresh, sign-out")
