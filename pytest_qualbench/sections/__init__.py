"""Optional report sections: token cost, the rankers head-to-head, cold and seeded start times."""
