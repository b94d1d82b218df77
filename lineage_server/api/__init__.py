"""The REST API: thin DRF views and serializers over the apps' services and selectors."""
