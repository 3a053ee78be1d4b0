"""Twenty Questions: the fixed list of candidate words and the reward, shared by the engine, the
agents and the analysis code so that all of them score a game the same way.

The words and their order are those of appendix A.1 of the test-time learning paper; prompts list
them in this order, so it must not change.
"""

from __future__ import annotations

import math

CANDIDATES: tuple[str, ...] = (
    "Airplane", "Apple", "Banana", "Baseball", "Baseball bat", "Basketball", "Battery", "Bear",
    "Bed", "Belt", "Blender", "Boat", "Bookcase", "Boots", "Bowl", "Bracelet", "Broccoli", "Brooch",
    "Bus", "Bush", "Cactus", "Calculator", "Calendar", "Camera", "Cantaloupe", "Canvas", "Car",
    "Carrot", "Cat", "Celery", "Chair", "Chopstick", "Clarinet", "Computer", "Computer keyboard",
    "Cooking pot", "Corn", "Couch", "Cow", "Cucumber", "Cup", "Desk", "Diary", "Dog", "Doll",
    "Dress", "Dresser", "Drill", "Drum", "Earring", "Elephant", "Eraser", "Flute", "Football",
    "Forest", "Fork", "Gloves", "Glue", "Golf ball", "Grape", "Guitar", "Hairclip", "Hammer", "Harp",
    "Hat", "Headphone", "Helicopter", "Helmet", "Horse", "Jacket", "Key", "Kite", "Knife", "Lake",
    "Lawn mower", "Lego", "Lion", "Locket", "Mango", "Marker", "Mattress", "Meteorite", "Microwave",
    "Monitor", "Motorcycle", "Mountain", "Necklace", "Nightstand", "Ocean", "Onion", "Orange",
    "Paintbrush", "Painting", "Pan", "Pants", "Paper", "Peach", "Peas", "Pen", "Pencil", "Pendant",
    "Piano", "Pillow", "Pineapple", "Plate", "Pliers", "Potato", "Printer", "Puzzle", "Rabbit",
    "Rake", "Refrigerator", "Ring", "River", "Rock", "Saw", "Saxophone", "Scarf", "Scissors",
    "Scooter", "Screwdriver", "Sculpture", "Sea", "Sharpie", "Sheep", "Ship", "Shirt", "Shoes",
    "Shovel", "Skirt", "Smartphone", "Soccer ball", "Socks", "Spinach", "Spoon", "Stapler",
    "Strawberry", "Table", "Television", "Tennis ball", "Tennis racket", "Tiger", "Tomato",
    "Toothbrush", "Toothpaste", "Train", "Tree", "Trombone", "Truck", "Trumpet", "Violin",
    "Volleyball", "Watch", "Watering can", "Watermelon", "Whisk", "Wrench",
)  # fmt: skip

MAX_QUESTIONS = 20


def ndcg_reward(k: int | None) -> float:
    """NDCG@20 of a game whose answer was named at question ``k`` (1-based); ``None`` = not found.

    >>> ndcg_reward(1), ndcg_reward(3), ndcg_reward(None)
    (1.0, 0.5, 0.0)
    """
    if k is None:
        return 0.0
    if k < 1:
        raise ValueError(f"question index must be 1 or more, got {k}")
    return 1.0 / math.log2(k + 1)
