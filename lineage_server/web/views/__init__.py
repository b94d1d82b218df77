"""The HTML pages: lineage pages drawn by the frontend from the JSON API, and account forms."""
