"""What every HTTP face shares: the caller's credentials and services from a request, JSON
bodies bounded in size and depth, the envelope and its errors, and the security headers of
what browsers receive. No face imports another face for these."""
