"""The official Supabase auth client (supabase_auth, PyPI) against the dev server.

Run by .ci/run: `python3 supabase_auth_check.py http://127.0.0.1:PORT/auth/v1`. Every error
must reach the client with its GoTrue code (it reads `code` only when the server echoes
X-Supabase-Api-Version), weak passwords with their reasons, and the everyday calls must work.
Exits non-zero on the first difference.
"""
import sys
import uuid

from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

url = sys.argv[1]
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


signed_up = client.sign_up({"email": email, "password": "password-official-1"})
assert signed_up.user.email == email
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
client.update_user({"password": "password-official-2"})
expect_error("same password", lambda: client.update_user({"password": "password-official-2"}), "same_password", 422)
client.refresh_session()
client.sign_out()
expect_error("old password", lambda: client.sign_in_with_password({"email": email, "password": "password-official-1"}),
             "invalid_credentials", 400)
print("supabase_auth", "ok:", "sign-up, errors with codes, weak-password reasons, sign-in, user, password change,",
      "refresh, sign-out")
