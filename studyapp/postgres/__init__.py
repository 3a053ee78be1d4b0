"""The site's PostgreSQL backend: Django's, with a pool wait a thread may shorten (see base)."""
