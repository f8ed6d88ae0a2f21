// How many principals there are (from the count store): what splits the index's read into ranges.
MATCH (p:Principal)
RETURN count(p) AS n
