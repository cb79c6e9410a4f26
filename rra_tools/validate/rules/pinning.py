"""pinning"""
