"""kg.train"""
