__version__ = "3.9.0"
