"""Ranking of candidate documents for search mode (lexical now, semantic later)."""
