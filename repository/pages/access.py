"""(being written)"""

from flask import Blueprint

bp = Blueprint("access", __name__)
