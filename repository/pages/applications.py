"""(being written)"""

from flask import Blueprint

bp = Blueprint("applications", __name__)
