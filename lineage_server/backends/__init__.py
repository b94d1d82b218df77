"""Database backends of the embedded (one-machine) install."""
