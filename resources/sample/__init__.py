"""The bundled sample résumé (a fictitious person), read with importlib.resources."""
