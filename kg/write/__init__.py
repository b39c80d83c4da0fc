"""kg.write"""
