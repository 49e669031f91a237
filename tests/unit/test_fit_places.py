"""Locations as boards write them: two-letter codes read with the rest of the location."""

import pytest

from backend.pipeline.fit.places import country_of, place_tags


@pytest.mark.parametrize(("location", "country"), [
    ("Berlin, DE", "germany"),            # ISO code after a German city, not Delaware
    ("Wilmington, DE", "united states"),  # an unknown city: the US state
    ("Toronto, CA", "canada"),
    ("Los Angeles, CA", "united states"),
    ("Bengaluru, IN", "india"),
    ("Austin, TX", "united states"),
    ("Atlanta, GA, United States", "united states"),
    ("Amsterdam, NL", "netherlands"),
    ("NL", "netherlands"),                # not a US state: the ISO code
    ("London, UK", "united kingdom"),
    ("Berlin, Germany", "germany"),
])
def test_two_letter_codes_follow_the_rest_of_the_location(location, country):
    assert country_of(location) == country


def test_berlin_de_is_in_the_eu_and_not_in_north_america():
    tags = place_tags("Berlin, DE")
    assert {"berlin", "germany", "eu", "europe"} <= tags
    assert "united states" not in tags and "north america" not in tags
