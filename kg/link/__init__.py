"""kg.link"""
