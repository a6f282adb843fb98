import unittest

from tokens import TokenIssuer


class IsValidTest(unittest.TestCase):
    def test_fresh_token_is_valid(self):
        issuer = TokenIssuer(ttl_s=60)
        self.assertTrue(issuer.is_valid(issuer.issue("ada")))

    def test_expired_token_is_invalid(self):
        issuer = TokenIssuer(ttl_s=-1)
        self.assertFalse(issuer.is_valid(issuer.issue("ada")))

    def test_issue_unchanged(self):
        issuer = TokenIssuer(ttl_s=10, clock=lambda: 100.0)
        token = issuer.issue("ada")
        self.assertEqual(token.expires_at, 110.0)
        self.assertEqual(token.value, "ada-1")


if __name__ == "__main__":
    unittest.main()
