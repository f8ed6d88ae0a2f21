MATCH (c:AccessChange)
WHERE true /*FILTERS*/
RETURN count(c) AS total
