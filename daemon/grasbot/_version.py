__version__ = "3.6.0"
